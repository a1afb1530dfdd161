import AuthloadCore
import Testing

/// The transport says what failed, typed; the layer that knows the profile says which key fixes it.
@Suite("Transport reasons and the profile keys that fix them")
struct TransportAdviceTests {
    @Test(
        "the generator's own limits and settings say what to change, naming the key where one fixes it",
        arguments: [
            (TransportError.Reason.sourceAddressNotLocal, "connections.sourceAddresses must name local addresses"),
            (.noFreeLocalPort, "connections.lifetime \"user\""),
            (.noFreeLocalPort, "connections.sourceAddresses"),
            (.outOfFileDescriptors, "ulimit -n"),
            (.outOfSocketMemory, "--shard"),
            (.http2NotNegotiated, "target.http to \"auto\"")
        ])
    func generatorAdvice(reason: TransportError.Reason, words: String) throws {
        let advice = try #require(reason.profileAdvice)
        #expect(advice.contains(words), "\(advice)")
    }

    @Test("a failure the target causes carries no advice about the generator's settings")
    func targetFailuresHaveNoAdvice() {
        let reasons: [TransportError.Reason] = [
            .unspecified, .refused, .unreachable, .reset, .unresolvedHost, .timedOut(.connecting), .timedOut(.tlsHandshake),
            .timedOut(.awaitingResponse), .timedOut(.readingResponse), .tlsFailed, .staleConnection, .badResponse(.cutShort),
            .systemCallFailed, .http2(code: 1, goAway: false), .http2(code: 11, goAway: true)
        ]
        for reason in reasons { #expect(reason.profileAdvice == nil, "\(reason)") }
    }

    @Test("the report's detail is the transport's words, then the advice; the transport's own text names no key")
    func outcomeAddsAdvice() {
        let error = TransportError(.sourceAddressNotLocal, "bind 192.0.2.1: EADDRNOTAVAIL (Cannot assign requested address)")
        #expect(!error.description.contains("connections."))
        #expect(
            Outcome(error).detail
                == "socket error: bind 192.0.2.1: EADDRNOTAVAIL (Cannot assign requested address): connections.sourceAddresses "
                + "must name local addresses")
        // A failed call nothing names keeps its words alone.
        #expect(
            Outcome(TransportError(.systemCallFailed, "recv: EINVAL (Invalid argument)")).detail
                == "socket error: recv: EINVAL (Invalid argument)")
    }

    @Test("a timeout says, typed, whether the response had begun; a bad response keeps the parser's reason and limit")
    func typedDetails() {
        #expect(Outcome(TransportError(.timedOut(.awaitingResponse))).detail == "no response within the step timeout")
        #expect(
            Outcome(TransportError(.timedOut(.readingResponse), TransportError.incompleteDetail)).detail
                == "response incomplete within the step timeout")
        #expect(
            Outcome(TransportError.badResponse(.bodyTooLarge(limit: 1_048_576))).detail == "bad response: body larger than 1048576 bytes")
        #expect(Outcome(TransportError.badResponse(.invalidChunkSize)).detail == "bad response: invalid chunk size")
        #expect(Outcome(TransportError.badResponse(.malformedChunk)).detail == "bad response: malformed chunk")
        #expect(
            Outcome(TransportError.badResponse(.bodyShorterThanContentLength)).detail == "bad response: body shorter than Content-Length")
        // A kind built without a reason gets the one the kind implies.
        #expect(TransportError(.connectionRefused).reason == .refused && TransportError(.timeout).reason == .timedOut(.awaitingResponse))
        #expect(TransportError(.refused).kind == .connectionRefused && TransportError(.noFreeLocalPort).kind == .generatorLimit)
    }
}
