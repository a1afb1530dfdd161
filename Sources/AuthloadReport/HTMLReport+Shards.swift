import AuthloadCore

extension HTMLReport {
    /// A merged run's shards, one row each: where it ran, how it ended, its share of the flows and requests, how
    /// late it started, and its generator's health (the worst shard decides exit 3).
    static func shards(_ r: RunResult) -> String {
        guard let shards = r.shards, !shards.isEmpty else { return "" }
        var out = """
            <section>
            <h2>Shards</h2>
            <p class="hint">This report merges \(shards.count) shards: histograms added exactly, thresholds judged again on the merged data.</p>
            <div class="table-wrap"><table class="numbers">
            <thead><tr><th class="text">Shard</th><th class="text">Host</th><th class="text">Status</th><th>Flows</th><th>HTTP requests</th>
            <th>Started late</th><th>Lag p99</th><th>Dropped</th><th>CPU</th><th class="text">Generator</th></tr></thead>
            <tbody>

            """
        for shard in shards {
            let g = shard.generator
            let kept = g?.keptSchedule ?? true
            out += "<tr><td class=\"text\">\(Format.html(shard.shard))</td><td class=\"text\">\(Format.html(shard.hostname))</td>"
            out += "<td class=\"text\">\(shard.status.rawValue)</td><td>\(Format.count(shard.flows))</td>"
            out += "<td>\(shard.httpRequests.map(Format.count) ?? "")</td>"
            out += "<td>\(shard.startLateSeconds.map { Format.duration(seconds: $0) } ?? "")</td>"
            out += "<td>\(g.map { Format.latency(micros: $0.lagP99Micros) } ?? "")</td><td>\(g.map { Format.count($0.dropped) } ?? "")</td>"
            out += "<td>\(g?.cpuSeconds.map { Format.duration(seconds: $0) } ?? "")</td>"
            out +=
                "<td class=\"text\(kept ? "" : " bad")\">\(kept ? "kept its schedule" : Format.html(g!.problems.joined(separator: "; ")))</td></tr>\n"
        }
        return out + "</tbody></table></div>\n</section>\n"
    }
}
