import Foundation
import Testing

@testable import AuthloadCLI

/// A simulation starts again with glibc's per-thread cache sized for it; nothing else does, and a user's own setting or
/// `AUTHLOAD_ALLOCATOR_TUNING=off` wins.
@Suite("Allocator tuning")
struct AllocatorTuningTests {
    static let tuned = "glibc.malloc.tcache_count=256"

    @Test(
        "a simulation, whichever way it is asked for, gets the cache setting",
        arguments: [["simulate", "p.json"], ["run", "p.json", "--simulate"], ["simulate", "p.json", "--threads", "2", "--quiet"]])
    func simulationIsTuned(arguments: [String]) {
        #expect(AllocatorTuning.tunables(for: arguments, environment: [:]) == Self.tuned)
        #expect(AllocatorTuning.tunables(for: arguments, environment: ["GLIBC_TUNABLES": ""]) == Self.tuned)
    }

    @Test(
        "a real run, another command, help, or a command line that does not parse goes on untouched",
        arguments: [
            ["run", "p.json"], ["serve"], ["validate", "p.json"], ["simulate", "--help"], ["simulate", "p.json", "--threads", "0"], []
        ])
    func otherCommandsAreNot(arguments: [String]) {
        #expect(AllocatorTuning.tunables(for: arguments, environment: [:]) == nil)
    }

    @Test("the user's other tunables are kept, and the user's own cache size or the opt-out wins")
    func userSettingsWin() {
        let simulate = ["simulate", "p.json"]
        #expect(
            AllocatorTuning.tunables(for: simulate, environment: ["GLIBC_TUNABLES": "glibc.malloc.arena_max=2"])
                == "glibc.malloc.arena_max=2:\(Self.tuned)")
        #expect(AllocatorTuning.tunables(for: simulate, environment: ["GLIBC_TUNABLES": "glibc.malloc.tcache_count=7"]) == nil)
        #expect(AllocatorTuning.tunables(for: simulate, environment: ["AUTHLOAD_ALLOCATOR_TUNING": "off"]) == nil)
        #expect(AllocatorTuning.tunables(for: simulate, environment: ["AUTHLOAD_ALLOCATOR_TUNING": "OFF"]) == nil)
        #expect(AllocatorTuning.tunables(for: simulate, environment: ["AUTHLOAD_ALLOCATOR_TUNING": "on"]) == Self.tuned)
    }

    #if os(Linux)
    /// The variables the process with `pid` started with (after its last exec).
    private func environment(of pid: Int32) throws -> [String: String] {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
        var variables: [String: String] = [:]
        for entry in bytes.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            guard let equals = text.firstIndex(of: "=") else { continue }
            variables[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        return variables
    }

    @Test("the authload executable runs a simulation in a process started again, by its name, with the setting; a real run as it is")
    func executableRestarts() async throws {
        let profile = try temporaryFile(
            "long-rehearsal.json",
            BinaryTests.shortProfile.replacingOccurrences(of: "\"duration\": \"2s\"", with: "\"duration\": \"1000h\""))
        let out = (profile as NSString).deletingLastPathComponent + "/rehearsal-report"
        var parent = ProcessInfo.processInfo.environment
        parent["GLIBC_TUNABLES"] = nil
        parent["AUTHLOAD_ALLOCATOR_TUNING"] = nil

        // Its first line comes from the restarted process, which then simulates for far longer than the test waits.
        let simulation = try RunningAuthload(["simulate", profile, "--out", out], environment: parent)
        await simulation.waitFor("authload 0.1.0: short")
        let simulated = try environment(of: simulation.process.processIdentifier)
        let name = try String(contentsOfFile: "/proc/\(simulation.process.processIdentifier)/comm", encoding: .utf8)
        simulation.process.interrupt()
        #expect(await simulation.waitForExit() == 130, "stdout: \(simulation.stdout) stderr: \(simulation.stderr)")
        #expect(simulated["GLIBC_TUNABLES"] == Self.tuned)
        #expect(name == "authload\n", "started again under its own name, as ps and pgrep show it")

        let real = try RunningAuthload(["run", profile, "--out", out], environment: parent)
        await real.waitFor("authload 0.1.0: short")
        let unchanged = try environment(of: real.process.processIdentifier)
        real.process.interrupt()
        #expect(await real.waitForExit() == 130, "stdout: \(real.stdout) stderr: \(real.stderr)")
        #expect(unchanged["GLIBC_TUNABLES"] == nil)
    }
    #endif
}
