// The `liveactivity` executable: `serve` runs the server; the other subcommands are the script client.
import Foundation

signal(SIGPIPE, SIG_IGN)
exit(Command.run(Array(CommandLine.arguments.dropFirst())))
