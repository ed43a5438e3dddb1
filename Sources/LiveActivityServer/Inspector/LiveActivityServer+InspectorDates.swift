import Foundation
import LiveActivityCore

extension LiveActivityServer {
    /// The declaration of the declared kind a push addresses (the activity `activityId`, as `events` or the
    /// committed state hold it) or starts (`aps.attributes-type`), for the date lens; nil for built-in kinds.
    /// Service thread only.
    func declaration(forPush payload: JSONValue, activityId: String?, events: [ActivityEvent]) -> ActivityDeclaration? {
        var typeName = activityId.flatMap { id in
            (events.last { $0.activity.id == id }?.activity ?? center.activities[id])?.attributesType
        }
        if typeName == nil, case .object(let root) = payload, case .object(let aps)? = root["aps"],
           case .string(let name)? = aps["attributes-type"] {
            typeName = name
        }
        return (typeName.flatMap { center.kinds.kind(forPushType: $0) } as? DeclaredKind)?.declaration
    }
}
