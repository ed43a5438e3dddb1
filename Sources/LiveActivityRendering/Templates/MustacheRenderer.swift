import LiveActivityCore

/// Walks a compiled template's nodes against a context stack, appending to one output buffer.
struct MustacheRenderer {
    private(set) var output = ""
    private var stack: [JSONValue]
    private let partials: [String: MustacheTemplate]
    private var depth = 0
    private var expansions = 0

    init(context: JSONValue, partials: [String: MustacheTemplate]) {
        stack = [context]
        self.partials = partials
    }

    /// Renders `nodes`; `indentation` is written at the start of every source line (standalone partials).
    mutating func render(_ nodes: [MustacheNode], indentation: String) {
        for node in nodes {
            switch node {
            case .text(let text):
                output += text
            case .indent:
                if !indentation.isEmpty { output += indentation }
            case .variable(let path, let escaped):
                guard let value = lookup(path) else { continue }
                value.appendMustacheText(to: &output, escaped: escaped)
            case .section(let path, let inverted, let children):
                let value = lookup(path)
                if inverted {
                    if value?.isMustacheFalsey ?? true { enter(children, context: nil, indentation: indentation) }
                } else if let value, !value.isMustacheFalsey {
                    if case .array(let elements) = value {
                        for element in elements { enter(children, context: element, indentation: indentation) }
                    } else {
                        enter(children, context: value, indentation: indentation)
                    }
                }
            case .partial(let name, let ownIndentation):
                guard let partial = partials[name] else { continue }
                // A standalone tag indents every line of the partial; an inline one does not.
                enter(partial.nodes, context: nil, indentation: ownIndentation.map { indentation + $0 } ?? "")
            }
        }
    }

    /// Renders a section body or a partial one level deeper, with `context` pushed if given; nothing past the
    /// depth limit or once the render has used up its ``MustacheTemplate/maximumExpansions``.
    private mutating func enter(_ nodes: [MustacheNode], context: JSONValue?, indentation: String) {
        guard depth < MustacheTemplate.maximumDepth, expansions < MustacheTemplate.maximumExpansions else { return }
        depth += 1
        expansions += 1
        if let context { stack.append(context) }
        render(nodes, indentation: indentation)
        if context != nil { stack.removeLast() }
        depth -= 1
    }

    /// The value a name resolves to: the first part through the stack, top down, the rest inside it.
    private func lookup(_ path: [String]) -> JSONValue? {
        guard let first = path.first else { return stack.last }
        var found: JSONValue?
        for context in stack.reversed() {
            if case .object(let members) = context, let value = members[first] {
                found = value
                break
            }
        }
        guard var value = found else { return nil }
        for key in path.dropFirst() {
            guard case .object(let members) = value, let next = members[key] else { return nil }
            value = next
        }
        return value
    }
}
