import AuthloadCore
import AuthloadTesting
import AuthloadWire
import Testing

@testable import AuthloadFlows

@Suite("GCCS status tracker")
struct GCCSStatusTrackerTests {
    typealias Instant = ManualClock.Instant
    func at(_ ms: Int) -> Instant { Instant(offset: .milliseconds(ms)) }

    @Test("times each status from the start and from the previous event, a request restarting the gap")
    func timing() {
        var tracker = GCCSStatusTracker(flowStart: at(0))
        tracker.sent(at: at(100))
        #expect(
            tracker.receive(.createChannel, at: at(300))
                == .progress(.createChannel, sinceStart: .milliseconds(300), gap: .milliseconds(200)))
        #expect(
            tracker.receive(.selectNodes, at: at(450)) == .progress(.selectNodes, sinceStart: .milliseconds(450), gap: .milliseconds(150)))
        tracker.sent(at: at(500))
        #expect(
            tracker.receive(.authCanceled, at: at(520)) == .progress(.authCanceled, sinceStart: .milliseconds(520), gap: .milliseconds(20)))
    }

    @Test("the tracker's timed and terminal sets hold exactly the flow's timed statuses and the four ends")
    func statusSets() {
        let ends: Set<GCCSStatus> = [.authCompleted, .authCanceled, .authFailed, .authTimeout]
        for status in GCCSStatus.allCases {
            #expect(GCCSStatusTracker<Instant>.timed.contains(status) == GCCSAuthFlow.timedStatuses.contains(status), "\(status)")
            #expect(GCCSStatusTracker<Instant>.terminal.contains(status) == ends.contains(status), "\(status)")
        }
    }

    @Test("a repeated status is a duplicate and not timed again; an untimed one is passed over")
    func duplicates() {
        var tracker = GCCSStatusTracker(flowStart: at(0))
        _ = tracker.receive(.createChannel, at: at(10))
        #expect(tracker.receive(.createChannel, at: at(20)) == .duplicate(.createChannel))
        #expect(tracker.receive(.startAuth, at: at(30)) == .untracked(.startAuth))
    }

    @Test("a status that arrived before the request it follows has no negative gap")
    func earlyStatus() {
        var tracker = GCCSStatusTracker(flowStart: at(0))
        tracker.sent(at: at(100))
        #expect(tracker.receive(.createChannel, at: at(90)) == .progress(.createChannel, sinceStart: .milliseconds(90), gap: .zero))
    }

    @Test("a second, different end is a conflict; the same end again is a duplicate")
    func conflictingEnds() {
        var tracker = GCCSStatusTracker(flowStart: at(0))
        _ = tracker.receive(.authCompleted, at: at(10))
        #expect(tracker.receive(.authCompleted, at: at(11)) == .duplicate(.authCompleted))
        #expect(tracker.receive(.authCanceled, at: at(12)) == .conflictingEnd(first: .authCompleted, then: .authCanceled))
        #expect(tracker.end == .authCompleted)
    }

    @Test("verification statuses skipped before a later one are reported missing once each")
    func missing() {
        var tracker = GCCSStatusTracker(flowStart: at(0))
        #expect(tracker.takeMissing(before: .createChannel) == [])
        #expect(tracker.takeMissing(before: .startVerificationOfNodes) == [.createChannel, .selectNodes])
        _ = tracker.receive(.startVerificationOfNodes, at: at(10))
        #expect(tracker.takeMissing(before: .completeVerificationOfNodes) == [], "already reported")
        #expect(tracker.takeMissing(before: .authCompleted) == [], "not a verification status")
    }

    @Test("a status set holds each status apart, and says whether an insert added it")
    func statusSet() {
        var set: GCCSStatusSet = [.authFailed]
        for status in GCCSStatus.allCases where status != .authFailed {
            #expect(!set.contains(status))
            let added = set.insert(status)
            #expect(added)
            #expect(set.contains(status))
            let again = set.insert(status)
            #expect(!again)
        }
        #expect(set.contains(.authFailed))
        #expect(!GCCSStatusTracker<Instant>.terminal.contains(.completeVerificationOfNodes))
        #expect(GCCSStatusTracker<Instant>.terminal.contains(.authTimeout))
    }

    @Test("each step and timed status records under its own name, a status's gap right after it")
    func stepIndices() {
        for step in GCCSAuthFlow.Step.allCases {
            #expect(GCCSAuthFlow.stepNames[GCCSAuthFlow.index(step)] == step.rawValue)
        }
        for status in GCCSStatus.allCases {
            let indices = GCCSAuthFlow.indices(of: status)
            #expect((indices != nil) == GCCSAuthFlow.timedStatuses.contains(status), "\(status)")
            if let (sinceStart, gap) = indices {
                #expect(GCCSAuthFlow.stepNames[sinceStart] == status.rawValue)
                #expect(GCCSAuthFlow.stepNames[gap] == status.rawValue + " gap")
            }
        }
    }
}
