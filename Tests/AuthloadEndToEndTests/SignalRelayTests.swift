import Foundation
import Testing

@testable import AuthloadCLI

/// Overlapping relays (`simulate --threads` runs one per shard): the signals keep off their default action until the
/// last relay ends, so a shard that ends first does not leave the others to be killed by the next Ctrl-C.
@Suite("Signal relays", .serialized)
struct SignalRelayTests {
    /// Whether SIGINT's disposition is now "ignore" at the process level (a Dispatch source relays it).
    private func sigintIgnored() -> Bool {
        var current = sigaction()
        sigaction(SIGINT, nil, &current)
        // Function pointers are not Equatable: compared by address (SIG_IGN is the address 1).
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    @Test("the default action comes back only when the last of two relays is cancelled, and a second cancel is nothing")
    func overlappingRelays() async {
        let before = SignalRelay.liveCount
        let first = await SignalRelay.armed { _ in }
        let second = await SignalRelay.armed { _ in }
        #expect(SignalRelay.liveCount == before + 2)
        #expect(sigintIgnored())
        first.cancel()
        first.cancel()
        #expect(SignalRelay.liveCount == before + 1, "cancelling twice counts once")
        #expect(sigintIgnored(), "the second relay still needs SIGINT kept from its default action")
        second.cancel()
        #expect(SignalRelay.liveCount == before)
        if before == 0 { #expect(!sigintIgnored(), "the last relay gives SIGINT its default action back") }
    }
}
