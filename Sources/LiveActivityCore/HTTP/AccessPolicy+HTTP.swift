
extension AccessPolicy {
    /// Whether the token `request` presents (bearer or `?token=`) grants at least the viewer role.
    package func mayRead(_ request: HTTPRequest) -> Bool {
        guard let role = role(presenting: request.presentedToken) else { return false }
        return role != .unauthenticated
    }
}

extension HTTPResponse {
    /// 401 with the protocol's `unauthorized` error naming both ways to give a token.
    package static let readTokenNeeded = HTTPResponse.error(.unauthorized, ProtocolError(.unauthorized, field: "token",
        message: "token: this API needs a viewer or controller token (Authorization: Bearer … or ?token=)"))
}
