/// Activities whose kind changed under them: kept as they are, marked with the reason (issue 17, item 5).
extension ActivityCenter {
    /// Swaps in `kinds` (a reload of the kind folders) and marks the activities that no longer validate.
    /// Nothing is deleted or changed but ``Activity/kindProblem``.
    public mutating func replaceKinds(_ kinds: KindRegistry) {
        self.kinds = kinds
        markKindProblems()
    }

    /// Sets every activity's ``Activity/kindProblem`` under the current kinds, and reads the countdown again
    /// of a declared kind's activity that has none (loaded from a store before its kind was).
    public mutating func markKindProblems() {
        for (id, activity) in activities {
            let problem = kindProblem(of: activity)
            if activity.kindProblem != problem { activities[id]?.kindProblem = problem }
            if problem == nil, activity.timer == nil, let kind = kinds.all.first(where: { $0.attributesType == activity.attributesType }),
               let timer = (try? kind.state(from: activity.content.state, field: "content.state"))?.timer {
                activities[id]?.timer = kind.anchored(timer, startDate: activity.startDate)
            }
        }
    }

    /// Why `activity` no longer validates under its kind, or `nil`: its kind is gone, or its attributes or
    /// state do not pass the kind's current declaration (`Attributes.swift` and `kind.json`'s limits).
    public func kindProblem(of activity: Activity) -> String? {
        guard let kind = kinds.all.first(where: { $0.attributesType == activity.attributesType }) else {
            return "kind \"\(activity.attributesType)\" is no longer loaded (its folder is gone or does not read); the activity is kept as it was"
        }
        return kind.problem(attributes: activity.attributes, state: activity.content.state)
    }
}
