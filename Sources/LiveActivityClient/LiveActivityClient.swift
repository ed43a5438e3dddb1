// The script client's WebSocket connection (libwebsockets client API). Being written.
