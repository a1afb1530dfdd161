extension FlowContext {
    /// One request after any retries it took, not yet recorded: the caller classifies it and decides
    /// whether and how the step counts (a handled answer such as a session expiry may not).
    public struct Attempt: Sendable {
        /// The final response, or nil when none came.
        public var response: HTTPResponse?
        /// Why no response came (timeout, transport error, cancelled, or the flow deadline during a back-off).
        public var failure: Outcome?
        /// When the final request was sent (for a flow's first request, its due instant when it started late).
        public var start: C.Instant
        /// How many times the request was sent again after a back-off.
        public var retries: Int

        /// The final request's own latency (the transport's measure), or start → now when none came.
        public func latency(now: C.Instant) -> Duration { response?.timing.total ?? start.duration(to: now) }
    }

    /// Sends `request`, backing off and sending it again while `backoff` names a wait (e.g. a 429 until its reset).
    ///
    /// Each retry is recorded on `retryStep` — an event step, timed by the wait — and never as a sample of
    /// the request's own step: a server that asks the client to slow down has not failed a step the client
    /// then completes. The final answer is returned unrecorded; record it with ``record(step:start:outcome:latency:)``.
    /// A back-off that would pass the flow's deadline ends at the deadline with a timeout.
    ///
    /// - Parameters:
    ///   - retryStep: the step number retries are recorded on.
    ///   - maxRetries: how many times to send again; the answer after the last is returned as it is.
    ///   - backoff: how long to wait before sending again, or nil to take the response as final.
    public func sendWithBackoff(
        _ request: HTTPRequest, retryStep: Int, maxRetries: Int,
        backoff: (HTTPResponse) -> Duration?
    ) async -> Attempt {
        var retries = 0
        var late = Duration.zero
        while true {
            let sent = clock.now
            let sentOffset = runStart.duration(to: sent)
            // The first request carries a late start's wait, also when a retry answers it (see send(_:isolation:));
            // the back-off waits are the retry events', not the step's.
            if retries == 0 { late = lateness(sentAt: sentOffset) }
            let start = sent.advanced(by: .zero - late)
            let timeout = min(stepTimeout, sent.duration(to: deadline))
            guard timeout > .zero else {
                return Attempt(response: nil, failure: Outcome(.timeout, "flow deadline passed"), start: start, retries: retries)
            }
            var response: HTTPResponse
            do {
                response = try await client.execute(request, timeout: timeout, sentAt: sentOffset)
                response.timing.total += late
            } catch {
                return Attempt(response: nil, failure: Outcome(error), start: start, retries: retries)
            }
            guard retries < maxRetries, let wait = backoff(response) else {
                return Attempt(response: response, failure: nil, start: start, retries: retries)
            }
            let waitStart = clock.now
            let wake = waitStart.advanced(by: max(.zero, wait))
            do {
                try await clock.sleep(until: min(wake, deadline), tolerance: nil)
            } catch {
                return Attempt(response: nil, failure: .cancelled, start: start, retries: retries)
            }
            if wake > deadline {
                return Attempt(response: nil, failure: Outcome(.timeout, "flow deadline passed"), start: start, retries: retries)
            }
            record(step: retryStep, start: waitStart, outcome: .ok, latency: max(.zero, wait))
            retries += 1
        }
    }
}
