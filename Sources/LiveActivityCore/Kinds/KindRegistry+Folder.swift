/// Making a kind from a folder: a ``DeclaredKind`` read from its `Attributes.swift` and `kind.json`.
extension KindRegistry {
    /// The kind a folder defines: a ``DeclaredKind`` read from the folder's `Attributes.swift`, with its
    /// `kind.json` (enum names, limits, countdown). The built-in kinds are such folders too (`Kinds/workout`,
    /// `Kinds/emoji`).
    /// - Returns: the kind. Its wire name follows ``KindMetadata``'s naming rule (`KindNaming.swift`): `kind.json`'s
    ///   `name`, else the folder's name; the struct's name is always among its APNs `attributes-type` names.
    /// - Throws: ``KindFolderError`` naming `Attributes.swift` and the line the reader stopped at
    ///   (`Kinds/x/Attributes.swift:12: unsupported type "Color" …`; for several `ActivityAttributes` structs,
    ///   the `kind.json` to write), or `kind.json` for a bad `countdown` or a `name` that is neither a kind
    ///   name nor the struct's; a folder without an `Attributes.swift`, or whose name is neither a kind name
    ///   nor a Swift-like name (letters, digits, `_`) and has no `kind.json` naming the kind, is refused too.
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
            throw KindFolderError(file: error.file, line: error.line, message: naming(error.message, folder: folder))
        }
        let wireName = folder.metadata.name
        // A folder's own name may be any Swift-like name (`DeliveryTracker`); a name kind.json gives, a kind name or the struct's.
        let folderNamed = !folder.hasKindJSON || folder.metadata.name == folder.folderName
        guard KindMetadata.isKindName(wireName) || wireName == declaration.attributesType
              || (folderNamed && KindMetadata.isSwiftTypeName(wireName)) else {
            if folder.hasKindJSON {
                throw KindFolderError(file: "\(folder.path)/kind.json", line: nil,
                                      message: "\"name\": \"\(wireName.clipped(to: 64))\" is neither a kind name (1…64 of a-z, 0-9, - and _) nor the "
                                          + "struct's name \"\(declaration.attributesType)\"")
            }
            throw KindFolderError(file: folder.path, line: nil,
                                  message: "the folder name \"\(wireName.clipped(to: 64))\" is not a kind name (1…64 of a-z, 0-9, - and _) nor the "
                                      + "struct's name \"\(declaration.attributesType)\"; rename the folder, or write kind.json: "
                                      + #"{"name": "\#(suggestedName(wireName))"}"#)
        }
        var metadata = folder.metadata
        if !folder.hasKindJSON { metadata.label = declaration.attributesType }
        do throws(ProtocolError) {
            return try DeclaredKind(declaration: declaration, metadata: metadata)
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

    /// The reader's "several structs" message with the exact `kind.json` to write for this folder.
    private static func naming(_ message: String, folder: KindFolder) -> String {
        guard message.hasPrefix(DeclarationResolver.severalStructs), let open = message.firstIndex(of: "\""),
              let close = message[message.index(after: open)...].firstIndex(of: "\"") else { return message }
        let first = String(message[message.index(after: open)..<close])
        return message.components(separatedBy: ";").first! + "; to read \"\(first)\", write \(folder.path)/kind.json: "
            + KindMetadata.kindJSONNaming(first) + (folder.hasKindJSON ? " (beside its other keys)" : "")
    }

    /// A kind name made from a folder name: lower-cased, other characters as `-` (`My Kind` → `my-kind`).
    static func suggestedName(_ name: String) -> String {
        let mapped = String(name.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") ? $0 : "-" }.prefix(64))
        return mapped.isEmpty ? "kind" : mapped
    }
}
