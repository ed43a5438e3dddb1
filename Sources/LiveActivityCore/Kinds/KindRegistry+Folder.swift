/// Making a kind from a folder: a ``DeclaredKind`` read from its `Attributes.swift` and `kind.json`.
extension KindRegistry {
    /// The kind a folder defines: a ``DeclaredKind`` read from the folder's `Attributes.swift`, with its
    /// `kind.json` (enum names, limits, countdown). The built-in kinds are such folders too (`Kinds/workout`,
    /// `Kinds/emoji`).
    /// - Returns: the kind (its wire name is `kind.json`'s `name`, or the struct's name without a `kind.json`).
    /// - Throws: ``KindFolderError`` naming `Attributes.swift` and the line the reader stopped at
    ///   (`Kinds/x/Attributes.swift:12: unsupported type "Color" …`), or `kind.json` for a bad `countdown`;
    ///   a folder without an `Attributes.swift` is refused too.
    public static func kind(for folder: KindFolder) throws(KindFolderError) -> any ActivityKind {
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
