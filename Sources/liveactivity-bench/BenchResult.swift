import Foundation

/// The figures of one run, printed as one JSON line and as a table.
struct BenchResult {
    /// Ordered (name, value) pairs; a value is a number, a string, a Bool or nil (JSON null).
    var fields: [(String, Any?)] = []

    subscript(_ name: String) -> Any? {
        fields.first { $0.0 == name }?.1 ?? nil
    }

    /// One JSON object on one line, keys in insertion order.
    func jsonLine() -> String {
        "{" + fields.map { "\"\($0.0)\":\(Self.json($0.1))" }.joined(separator: ",") + "}"
    }

    private static func json(_ value: Any?) -> String {
        switch value {
        case nil: return "null"
        case let value as Bool: return value ? "true" : "false"
        case let value as Int: return String(value)
        case let value as Double: return value.isFinite ? String(format: "%.3f", value) : "null"
        case let value as String:
            let escaped = value.unicodeScalars.map { scalar -> String in
                switch scalar {
                case "\"": return "\\\""
                case "\\": return "\\\\"
                case "\n": return "\\n"
                case _ where scalar.value < 0x20: return String(format: "\\u%04x", scalar.value)
                default: return String(scalar)
                }
            }.joined()
            return "\"\(escaped)\""
        default: return "\"\(value!)\""
        }
    }

    /// Two columns, one field a row.
    func table() -> String {
        let width = fields.map(\.0.count).max() ?? 0
        return fields.map { name, value in
            let shown: String
            switch value {
            case nil: shown = "-"
            case let value as Double: shown = String(format: "%.2f", value)
            default: shown = "\(value!)"
            }
            return name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + shown
        }.joined(separator: "\n")
    }
}

extension FanOutBench {
    /// Collects the run's figures.
    func result() -> BenchResult {
        var r = BenchResult()
        let watchers = options.clients
        let connected = states.dropFirst().filter { $0 == .ready || $0 == .open || $0 == .closed }.count
        let expected = sent * audience
        let summary = latencies.summary()
        let window = Double((lastDelivery > publishStart ? lastDelivery : publishStart) &- publishStart) / 1e9
        r.fields.append(("label", options.label ?? (options.messages == 0 ? "idle" : "fanout")))
        r.fields.append(("server", options.servers.map(\.url).joined(separator: " ")))
        r.fields.append(("publish_server", options.publishServer.url))
        r.fields.append(("n", watchers))
        r.fields.append(("connected", connected))
        r.fields.append(("connect_failed", watchers - connected))
        r.fields.append(("closed_early", closedEarly))
        r.fields.append(("deflate", options.deflate))
        r.fields.append(("ticks", options.ticks))
        r.fields.append(("m_target", options.messages))
        r.fields.append(("m_sent", sent))
        r.fields.append(("rate", options.rate))
        r.fields.append(("window", options.rate == 0 ? options.window : nil))
        r.fields.append(("connect_s", lastEstablished > firstDial ? Double(lastEstablished - firstDial) / 1e9 : nil))
        r.fields.append(("publish_s", publishEnd > publishStart ? Double(publishEnd - publishStart) / 1e9 : nil))
        r.fields.append(("msg_bytes", messageBytes))
        r.fields.append(("expected", expected))
        r.fields.append(("delivered", delivered))
        r.fields.append(("lost", expected - delivered))
        r.fields.append(("dups", duplicates))
        r.fields.append(("p50_ms", summary.p50))
        r.fields.append(("p90_ms", summary.p90))
        r.fields.append(("p99_ms", summary.p99))
        r.fields.append(("max_ms", summary.max))
        r.fields.append(("mean_ms", summary.mean))
        r.fields.append(("delivered_per_s", window > 0 ? Double(delivered) / window : nil))
        r.fields.append(("server_rss_before_kb", rssBefore))
        r.fields.append(("server_rss_connected_kb", rssConnected))
        r.fields.append(("server_rss_after_kb", rssAfter))
        if let before = rssBefore, let connectedKiB = rssConnected, connected > 0 {
            r.fields.append(("server_rss_per_conn_bytes", (connectedKiB - before) * 1024 / connected))
        } else {
            r.fields.append(("server_rss_per_conn_bytes", nil))
        }
        if let before = cpuBefore, let after = cpuAfter, window > 0 {
            r.fields.append(("server_cpu_pct", (after - before) / window * 100))
            r.fields.append(("server_cpu_us_per_delivery", delivered > 0 ? (after - before) * 1e6 / Double(delivered) : nil))
        }
        if ownCPUAfter > ownCPUBefore, window > 0 {
            r.fields.append(("bench_cpu_pct", (ownCPUAfter - ownCPUBefore) / window * 100))
        }
        let encodes = countersAfter.flatMap { after in countersBefore.map { after.encodes - $0.encodes } }
        let deliveries = countersAfter.flatMap { after in countersBefore.map { after.deliveries - $0.deliveries } }
        r.fields.append(("encodes_before", countersBefore?.encodes))
        r.fields.append(("encodes_after", countersAfter?.encodes))
        r.fields.append(("deliveries_before", countersBefore?.deliveries))
        r.fields.append(("deliveries_after", countersAfter?.deliveries))
        r.fields.append(("encodes_delta", encodes))
        r.fields.append(("deliveries_delta", deliveries))
        if let encodes, let deliveries, encodes > 0 {
            r.fields.append(("deliveries_per_encode", Double(deliveries) / Double(encodes)))
        }
        r.fields.append(("ticks_seen", ticksSeen))
        r.fields.append(("hold_s", holdEnd > holdStart ? Double(holdEnd - holdStart) / 1e9 : nil))
        r.fields.append(("ticks_while_held", ticksWhileHeld))
        r.fields.append(("controller_errors", controllerErrors))
        r.fields.append(("ok", failure == nil && connected == watchers && expected == delivered && closedEarly == 0))
        r.fields.append(("failure", failure ?? lastError))
        return r
    }
}
