/// Making a kind from a folder: a built-in Swift kind, or a ``DeclaredKind`` read from `Attributes.swift`.
extension KindRegistry {
    /// The kind a folder defines: the built-in Swift kind for `workout` and `emoji`, else a ``DeclaredKind``
    /// read from the folder's `Attributes.swift`.
    /// - Returns: the kind (its wire name is `kind.json`'s `name`, or the struct's name without a `kind.json`).
    /// - Throws: ``KindFolderError`` naming `Attributes.swift` and the line the reader stopped at
    ///   (`Kinds/x/Attributes.swift:12: unsupported type "Color" …`), or `kind.json` for a bad `countdown`;
    ///   a folder with neither a built-in name nor an `Attributes.swift` is refused too.
    public static func kind(for folder: KindFolder) throws(KindFolderError) -> any ActivityKind {
        if let kind = builtInKind(for: folder.metadata) { return kind }
        let file = "\(folder.path)/Attributes.swift"
        guard let source = folder.attributesSource else {
            throw KindFolderError(file: folder.path, line: nil, message: "kind \"\(folder.metadata.name)\" has no Attributes.swift; skipped")
        }
        let declaration: ActivityDeclaration
        do throws(DeclarationError) {
            let preferred = folder.hasKindJSON ? folder.metadata.swiftNames.first : nil
            declaration = try declarationPreferring(preferred, source: source, file: file)
        } catch {
            throw KindFolderError(file: error.file, line: error.line, message: error.message)
        }
        do throws(ProtocolError) {
            return try DeclaredKind(declaration: declaration, metadata: folder.hasKindJSON ? folder.metadata : nil)
        } catch {
            throw KindFolderError(file: "\(folder.path)/kind.json", line: nil, message: error.message)
        }
    }

    /// Reads the declaration, choosing the struct named `preferred` when the file holds several and it is one of them.
    private static func declarationPreferring(_ preferred: String?, source: String, file: String) throws(DeclarationError) -> ActivityDeclaration {
        do {
            return try ActivityDeclaration(swiftSource: source, file: file)
        } catch {
            guard let preferred, let chosen = try? ActivityDeclaration(swiftSource: source, file: file, attributesType: preferred) else { throw error }
            return chosen
        }
    }
}
