import Foundation
import LiveActivityCore

/// `GET /kinds`: the activity kinds the server accepts, for the dashboard, the CLI and the gallery; and
/// `GET /kinds/{name}/schema`: a kind's JSON Schemas.
///
/// Answers `{"kinds": [{"name", "label", "swiftNames", "countdown", "durationShortcut", "title", "image",
/// "fallbackIcon", "enums", "presentations"}]}` (docs/TEMPLATES.md). No token needed: it shows no
/// activity. Handlers run on the service thread.
struct KindsRoute {
    /// The current catalog (swapped on reload).
    var catalog: () -> KindCatalog

    /// Registers `GET /kinds` and `GET /kinds/{name}/schema`.
    func register(on router: inout Router) {
        router.add([.get], "/kinds") { _ in
            let body = (try? MessageEncoder.encoder.encode(catalog().json)) ?? Data(#"{"kinds":[]}"#.utf8)
            return .json(.ok, Array(body))
        }
        router.add([.get], "/kinds/{name}/schema") { request in schema(request) }
    }

    /// `GET /kinds/{name}/schema[?form=protocol|codable]`: JSON Schemas (draft 2020-12) of a kind's attributes
    /// and content state, `{"attributesType", "attributes", "contentState", "fieldOrder"}` (`fieldOrder`: each
    /// part's keys in declaration order), in this protocol's form (the
    /// default: ISO-8601 dates, `{"start","end"}` ranges, enum fields by `kind.json` name or raw value) or in
    /// Swift's `Codable` form, as APNs pushes carry them (``ActivityDeclaration/jsonDescription(form:)``).
    /// 404 naming `name` for an unknown kind, 400 naming `form` for another form.
    func schema(_ request: HTTPRequest) -> HTTPResponse {
        let name = request.parameters["name"] ?? ""
        guard let kind = catalog().registry.all.first(where: { $0.attributesType == name }) as? DeclaredKind else {
            return .error(.notFound, ProtocolError(.invalidField, field: "name", message: "name: no kind named \"\(name.clipped(to: 64))\" (GET /kinds lists them)"))
        }
        let form: ContentForm
        switch request.query("form") ?? "protocol" {
        case "protocol": form = .protocolForm
        case "codable": form = .codable
        case let other:
            return .error(.badRequest, ProtocolError(.invalidField, field: "form", message: "form: must be protocol or codable, got \"\(other.clipped(to: 32))\""))
        }
        var description = kind.declaration.jsonDescription(form: form)
        if form == .protocolForm { description = Self.withEnumNames(description, kind: kind) }
        // The fields in declaration order (JSON objects have none), for the dashboard's START form.
        if case .object(var object) = description {
            let keys = { (part: DeclaredPart) in JSONValue.array(kind.declaration.root(part).fields.map { .string($0.key) }) }
            object["fieldOrder"] = .object(["attributes": keys(.attributes), "contentState": keys(.contentState)])
            description = .object(object)
        }
        let body = (try? MessageEncoder.encoder.encode(description)) ?? Data("{}".utf8)
        return .json(.ok, Array(body))
    }

    /// The schemas with each enum that `kind.json` names (a top-level field of `enums`) accepting its names
    /// beside its raw values, as the protocol form does.
    private static func withEnumNames(_ description: JSONValue, kind: DeclaredKind) -> JSONValue {
        guard case .object(var object) = description else { return description }
        for (part, key) in [(DeclaredPart.attributes, "attributes"), (.contentState, "contentState")] {
            guard case .object(var schema)? = object[key], case .object(var definitions)? = schema["$defs"] else { continue }
            for field in kind.declaration.root(part).fields {
                guard case .enumeration(let enumName) = field.type.unwrapped,
                      let names = kind.metadata.enums[field.key]?.filter(\.sentAsName), !names.isEmpty,
                      case .object(var definition)? = definitions[enumName], case .array(let raws)? = definition["enum"] else { continue }
                definition["enum"] = .array(names.map { JSONValue.string($0.value) } + raws.filter { raw in !names.contains { $0.value == raw.stringValue } })
                definitions[enumName] = .object(definition)
            }
            schema["$defs"] = .object(definitions)
            object[key] = .object(schema)
        }
        return .object(object)
    }
}
