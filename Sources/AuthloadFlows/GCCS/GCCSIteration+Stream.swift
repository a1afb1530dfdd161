import AuthloadCore
import AuthloadWire

/// The status stream of an iteration: its opening (the WebSocket, STOMP CONNECT and SUBSCRIBE), its waits, and its
/// goodbye.
extension GCCSIteration {
    // MARK: Opening

    /// C1–C2: the WebSocket, STOMP CONNECT, and the `/user/queue` subscription, as one `connect` step.
    ///
    /// The opening's call chain (the upgrade, CONNECT and SUBSCRIBE with their waits) runs in a child task, whose memory
    /// goes when it ends; what comes before and after it is worked out in synchronous helpers, so that this frame, which
    /// the task's memory must hold on top of the engine's, stays small.
    @inline(never)
    func openStatusStream() async -> Outcome {
        let start = clock.now
        let deadline = stepDeadline
        let result = await Self.apart(opening(start: start, until: deadline))
        return opened(result, start: start, deadline: deadline)
    }

    /// What ``openStatusStream()`` does in its child task: the session, or why it did not open (with the session once
    /// the socket opened, so that ``finish(_:)`` closes it).
    typealias Opened = (session: StompClient<C>?, error: (any Error)?)

    @inline(never)
    private func opening(start: C.Instant, until deadline: C.Instant) -> @Sendable () async -> Opened {
        let target = PercentEncoding.target(
            flow.basePath + paths.socket,
            query: [("clientKey", options.clientKey), ("deviceId", deviceID), ("channelKey", channelKey), ("userKey", userKey)])
        let (context, clock, options, paths) = (self.context, self.clock, self.options, self.paths)
        let request = HTTPRequest(method: "GET", target: target)
        return {
            let socket: any WebSocketConnection
            do {
                socket = try await context.openWebSocket(request, protocols: options.subprotocols, timeout: start.duration(to: deadline))
            } catch {
                return (nil, error)
            }
            var session = StompClient(socket: socket, clock: clock)
            do {
                try await session.connect(.connect(heartBeat: options.heartBeat), until: deadline)
                try await session.subscribe(destination: paths.queue, id: paths.queue, receipt: options.subscribeReceipt, until: deadline)
            } catch {
                return (session, error)
            }
            return (session, nil)
        }
    }

    /// Keeps the opened session and records the `connect` step.
    @inline(never)
    private func opened(_ opened: Opened, start: C.Instant, deadline: C.Instant) -> Outcome {
        stomp = opened.session
        let outcome: Outcome
        switch opened.error {
        case nil: outcome = .ok
        case let rejected as WebSocketUpgradeRejected: outcome = Outcome(.httpError, "handshake \(rejected.response.status)")
        case let error as StompClientError: outcome = error.outcome
        case let error?:
            outcome = deadline <= clock.now ? Outcome(.timeout, "no WebSocket within the step timeout") : Outcome(error)
        }
        context.record(step: GCCSAuthFlow.index(.connect), start: start, outcome: outcome)
        return outcome
    }

    // MARK: Waits

    /// Reads statuses on this task until one of `wait`'s targets arrives, timing each; any other end of the stream
    /// fails the step.
    ///
    /// A failure is recorded on the first target's step, timed from the flow's start.
    @inline(never)
    func awaitStatus(_ wait: StatusWait) async -> Outcome {
        guard let (follower, socket) = follow(wait) else { return Outcome(.protocolError, "no status stream") }
        // Once for the whole stream: the socket hands each frame to `observe` where it reads it. Only the follower, the
        // socket and a failure cross the wait, in this small frame.
        var failure: (any Error)?
        do {
            try await socket.consume(follower)
        } catch {
            failure = error
        }
        return followed(follower, on: socket, failure: failure, wait: wait)
    }

    /// Moves the session into a follower for `wait`, handing each frame to ``observe(_:until:)``, with the socket to run
    /// it on; nil when the stream is not open.
    ///
    /// The iteration keeps no copy of the session while the socket runs the follower (held, a copy is memory for a
    /// minute); ``followed(_:on:failure:wait:)`` or ``unfollow(_:on:)`` takes it back.
    @inline(never)
    func follow(_ wait: StatusWait) -> (follower: StompFollower<C>, socket: any WebSocketConnection)? {
        guard let stomp = stomp.take() else { return nil }
        let targets = wait.targets
        let follower = stomp.follower(until: wait.deadline) { [unowned self] in self.observe($0, until: targets) }
        return (follower, stomp.socket)
    }

    /// Takes the session back from a follower the socket never ran.
    func unfollow(_ follower: StompFollower<C>, on socket: any WebSocketConnection) {
        var client = StompClient(socket: socket, clock: clock)
        client.takeBack(follower)
        stomp = client
    }

    /// The end of a status wait: the session back from `follower`, and the wait's outcome, recorded on the first
    /// target's step when it failed, timed from the flow's start.
    ///
    /// - Parameter failure: what the socket's consumption of `follower` threw, if it threw.
    @inline(never)
    func followed(_ follower: StompFollower<C>, on socket: any WebSocketConnection, failure: (any Error)?, wait: StatusWait) -> Outcome {
        let (targets, expiry) = (wait.targets, wait.expiry)
        var client = StompClient(socket: socket, clock: clock)
        let outcome: Outcome
        do {
            outcome = try client.followed(follower, failure: failure)
        } catch .timeout {
            outcome = expiry
        } catch {
            outcome = error.outcome
        }
        stomp = client
        if !outcome.isOK, let steps = GCCSAuthFlow.indices(of: targets.recorded) {
            context.record(step: steps.sinceStart, start: tracker.flowStart, outcome: outcome)
        }
        return outcome
    }

    /// Takes one frame of the status stream: records a status, and says whether the stream reached one of `targets`
    /// or another end (nil: go on).
    private func observe(_ received: StompClient<C>.Received, until targets: StatusTargets) -> Outcome? {
        guard received.frame.command == .message else { return nil }
        guard let status = GCCSStatus(messageBody: received.frame.body) else {
            return Outcome(.protocolError, "status message without a known status")
        }
        for _ in tracker.takeMissing(before: status) { countEvent(.missingStatus) }
        switch tracker.receive(status, at: received.arrived) {
        case .progress(let status, let sinceStart, let gap):
            if let steps = GCCSAuthFlow.indices(of: status) {
                context.record(step: steps.sinceStart, start: tracker.flowStart, outcome: .ok, latency: sinceStart)
                context.record(step: steps.gap, start: received.arrived.advanced(by: .zero - gap), outcome: .ok, latency: gap)
            }
        case .conflictingEnd(let first, let then):
            return Outcome(.protocolError, "both \(first.rawValue) and \(then.rawValue) arrived")
        case .duplicate:
            countEvent(.duplicateStatus)
        case .untracked:
            break
        }
        if targets.contains(status) { return .ok }
        switch status {
        case .authFailed: return Outcome(.authFailure, "AuthFailed")
        case .authTimeout: return Outcome(.timeout, "AuthTimeout from the server")
        case .authCanceled, .authCompleted: return Outcome(.protocolError, "unexpected \(status.rawValue)")
        default: return nil
        }
    }

    /// Counts one status event (a duplicate, a missing status): a sample at the instant it was noticed.
    private func countEvent(_ step: Step) {
        context.record(step: GCCSAuthFlow.index(step), start: clock.now, outcome: .ok, latency: .zero)
    }

    // MARK: Goodbye

    /// UNSUBSCRIBE and DISCONNECT after a clean run (timed as `disconnect`), or a plain close after a failure.
    @inline(never)
    func finish(_ outcome: Outcome) async -> Outcome {
        guard let session = stomp else { return outcome }
        stomp = nil
        guard outcome.isOK else {
            await session.socket.close(code: 1000, reason: "", timeout: .seconds(1))
            return outcome
        }
        let start = clock.now
        // In a child task, as a request is: the wait for the receipt is as deep as the opening's.
        let goodbye = await Self.apart(leaving(session, until: stepDeadline))
        return left(goodbye, start: start)
    }

    /// What ``finish(_:)`` does in its child task: UNSUBSCRIBE, DISCONNECT, and what failed and what came late.
    typealias Goodbye = (unsubscribed: StompClientError?, late: [StompFrame], disconnected: StompClientError?)

    @inline(never)
    private func leaving(_ session: StompClient<C>, until deadline: C.Instant) -> @Sendable () async -> Goodbye {
        let queue = paths.queue
        return {
            var session = session
            var unsubscribed: StompClientError?
            do throws(StompClientError) {
                try await session.send(.unsubscribe(id: queue))
            } catch {
                unsubscribed = error
            }
            let (late, error) = await session.disconnect(until: deadline)
            return (unsubscribed, late, error)
        }
    }

    /// Records the `disconnect` step, failed by a late terminal status that conflicts with the end the flow acted on.
    @inline(never)
    private func left(_ goodbye: Goodbye, start: C.Instant) -> Outcome {
        var ended = goodbye.unsubscribed?.outcome ?? .ok
        if ended.isOK, let error = goodbye.disconnected { ended = error.outcome }
        // A terminal status after the end the flow acted on means the server sent two ends.
        for frame in goodbye.late where frame.command == .message {
            guard let status = GCCSStatus(messageBody: frame.body) else { continue }
            switch tracker.receive(status, at: clock.now) {
            case .conflictingEnd(let first, let then):
                ended = Outcome(.protocolError, "both \(first.rawValue) and \(then.rawValue) arrived")
            case .duplicate: countEvent(.duplicateStatus)
            case .progress, .untracked: break
            }
        }
        context.record(step: GCCSAuthFlow.index(.disconnect), start: start, outcome: ended)
        return ended
    }
}
