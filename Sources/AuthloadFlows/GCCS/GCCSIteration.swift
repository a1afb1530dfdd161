import AuthloadCore
import AuthloadWire

/// One GCCS authentication of one user: what the flow holds between its steps (keys, the STOMP
/// session, the status tracker), and the steps themselves.
///
/// A class, used by one task: its state lives in one allocation of its own size. As a generic struct it lived in the
/// task's async frames, whose memory a task keeps until it ends, in 1,000-byte slabs each frame of unknown size
/// started anew: with the socket held a minute, a user's task held two more slabs.
final class GCCSIteration<C: Clock> where C.Duration == Duration {
    typealias Step = GCCSAuthFlow.Step

    let flow: GCCSAuthFlow
    let context: FlowContext<C>
    let userKey: String
    let deviceID: String
    let cancels: Bool
    private var tracker: GCCSStatusTracker<C.Instant>
    private var stomp: StompClient<C>?
    private var channelKey = ""
    private var blockKey = ""
    /// What `auth/nodes` asked the app to do on the device before completing.
    private var authType: Int?

    init(flow: GCCSAuthFlow, context: FlowContext<C>, userKey: String, deviceID: String, cancels: Bool) {
        self.flow = flow
        self.context = context
        self.userKey = userKey
        self.deviceID = deviceID
        self.cancels = cancels
        tracker = GCCSStatusTracker(flowStart: context.flowStart)
    }

    private var options: GCCSAuthFlow.Options { flow.options }
    private var paths: GCCSPaths { flow.options.paths }
    private var clock: C { context.clock }

    /// The end of the current step: the step timeout from now, or the flow's deadline if sooner.
    private var stepDeadline: C.Instant { min(clock.now.advanced(by: context.stepTimeout), context.deadline) }

    /// The steps, each a function of its own kept out of line: inlined, their frames were one of 2.7 KB, which the task
    /// kept (in a slab of its own) for the whole minute the status stream is held.
    @inline(never)
    func run() async -> Outcome {
        var outcome = await requestChannel()
        if outcome.isOK { outcome = await openStatusStream() }
        if outcome.isOK { outcome = await verify() }
        if outcome.isOK { outcome = cancels ? await cancel() : await complete() }
        return await finish(outcome)
    }

    // MARK: Steps

    /// C0: `POST /auth` → channel and block keys.
    @inline(never)
    private func requestChannel() async -> Outcome {
        await post(.auth, path: paths.auth, body: authBody(), then: keepKeys)
    }

    @inline(never)
    private func authBody() -> JSONValue {
        ["clientKey": .string(options.clientKey), "userKey": .string(userKey), "deviceId": .string(deviceID), "authPlatform": "CMMAPF002"]
    }

    /// Keeps the channel and block keys `POST /auth` answered.
    @inline(never)
    private func keepKeys(_ result: StepResult) -> Outcome {
        guard result.outcome.isOK else { return result.outcome }
        guard let data = result.response.flatMap({ GCCSEnvelope(body: $0.body) })?.data,
            let channel = data["channelKey"]?.stringValue, !channel.isEmpty,
            let block = data["blockKey"]?.stringValue, !block.isEmpty
        else {
            return Outcome(.protocolError, "auth answered without channelKey and blockKey")
        }
        channelKey = channel
        blockKey = block
        return .ok
    }

    /// C1–C2: the WebSocket, STOMP CONNECT, and the `/user/queue` subscription, as one `connect` step.
    ///
    /// The opening's call chain (the upgrade, CONNECT and SUBSCRIBE with their waits) runs in a child task, whose memory
    /// goes when it ends; what comes before and after it is worked out in synchronous helpers, so that this frame, which
    /// the task's memory must hold on top of the engine's, stays small.
    @inline(never)
    private func openStatusStream() async -> Outcome {
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
        let query = [("clientKey", options.clientKey), ("deviceId", deviceID), ("channelKey", channelKey), ("userKey", userKey)]
            .map { "\($0)=\(PercentEncoding.encode($1))" }.joined(separator: "&")
        let (context, clock, options, paths) = (self.context, self.clock, self.options, self.paths)
        let request = HTTPRequest(method: "GET", target: "\(flow.basePath)\(paths.socket)?\(query)")
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

    /// C3–C4: `POST /auth/nodes`, then the status stream up to verification (or the status a cancelling user waits for).
    @inline(never)
    private func verify() async -> Outcome {
        switch await askForVerification() {
        case .failed(let outcome): return outcome
        case .follow(let deadline, let expiry):
            let target = cancels ? options.cancelAfter : .completeVerificationOfNodes
            return await awaitStatus([target], until: deadline, expiry: expiry)
        }
    }

    /// What a step does after its request: fail, or follow the status stream until `deadline`, failing with `expiry`.
    private enum Then {
        case failed(Outcome)
        case follow(until: C.Instant, expiry: Outcome)
    }

    /// C3: `POST /auth/nodes`, and how long the status stream may take to verify.
    @inline(never)
    private func askForVerification() async -> Then {
        tracker.sent(at: clock.now)
        return await post(.nodes, path: paths.nodes, body: nodesBody(), then: verificationWait)
    }

    @inline(never)
    private func nodesBody() -> JSONValue {
        [
            "lang": .string(options.lang), "clientKey": .string(options.clientKey), "deviceId": .string(deviceID),
            "enCodeCK": .string(encode(channelKey)), "enCodeBK": .string(encode(blockKey)),
            "enCodeDK": .string(encode(deviceID)), "userKey": .string(userKey)
        ]
    }

    /// How long the status stream may take to verify, from the `auth/nodes` answer that came now.
    @inline(never)
    private func verificationWait(_ result: StepResult) -> Then {
        guard result.outcome.isOK else { return .failed(result.outcome) }
        let answered = clock.now
        let data = result.response.flatMap { GCCSEnvelope(body: $0.body) }?.data
        authType = data?["authType"]?.intValue
        // Like the SDK: a local timer of authTimeRemaining from the answer; without one, the flow's deadline rules.
        let remaining = data?["authTimeRemaining"]?.intValue
        let authDeadline = remaining.map { answered.advanced(by: .milliseconds($0)) }
        let deadline = min(authDeadline ?? context.deadline, context.deadline)
        let expiry =
            authDeadline.map { $0 <= context.deadline } == true
            ? Outcome(.timeout, "AuthTimeout") : Outcome(.timeout, "flow deadline passed")
        return .follow(until: deadline, expiry: expiry)
    }

    /// C5–C6: `POST /auth/complete`, then `AuthCompleted`, then C7: the result token.
    @inline(never)
    private func complete() async -> Outcome {
        let completed = await askToComplete()
        guard completed.isOK else { return completed }
        let ended = await awaitStatus(
            [.authCompleted], until: stepDeadline, expiry: Outcome(.timeout, "no AuthCompleted within the step timeout"))
        guard ended.isOK else { return ended }
        return await fetchToken()
    }

    /// C5: `POST /auth/complete`.
    @inline(never)
    private func askToComplete() async -> Outcome {
        tracker.sent(at: clock.now)
        return await post(.complete, path: paths.complete, body: completeBody()) { $0.outcome }
    }

    @inline(never)
    private func completeBody() -> JSONValue {
        [
            "lang": .string(options.lang), "clientKey": .string(options.clientKey), "deviceId": .string(deviceID),
            "isSecondaryCertification": .bool(options.secondaryCertification.value(for: authType))
        ]
    }

    /// C7: `GET /auth`, the result token.
    @inline(never)
    private func fetchToken() async -> Outcome {
        await Self.apart(tokenRequest()).outcome
    }

    @inline(never)
    private func tokenRequest() -> @Sendable () async -> StepResult {
        let query = [("deviceId", deviceID), ("clientKey", options.clientKey), ("channelKey", channelKey)]
            .map { "\($0)=\(PercentEncoding.encode($1))" }.joined(separator: "&")
        let context = self.context
        let request = HTTPRequest(method: "GET", target: "\(flow.basePath)\(paths.auth)?\(query)")
        return {
            await context.exchange(step: GCCSAuthFlow.index(.token), request) { response in
                let outcome = GCCSAuthFlow.classify(response)
                guard outcome.isOK else { return outcome }
                let token = GCCSEnvelope(body: response.body)?.data.stringValue ?? ""
                return token.isEmpty ? Outcome(.protocolError, "no result token") : .ok
            }
        }
    }

    /// C8: `DELETE /auth`, then whichever end the server reports: `AuthCanceled`, or `AuthCompleted` when
    /// the verification finished first (then the cancel answers 5019). Never both.
    @inline(never)
    private func cancel() async -> Outcome {
        let cancelled = await askToCancel()
        guard cancelled.isOK else { return cancelled }
        return await awaitStatus(
            [.authCanceled, .authCompleted], until: stepDeadline,
            expiry: Outcome(.timeout, "no AuthCanceled within the step timeout"))
    }

    /// C8: `DELETE /auth`; a cancel that lost the race to the verification (5019) is OK too.
    @inline(never)
    private func askToCancel() async -> Outcome {
        tracker.sent(at: clock.now)
        let body: JSONValue = ["lang": .string(options.lang), "clientKey": .string(options.clientKey), "deviceId": .string(deviceID)]
        return await post(.cancel, path: paths.auth, method: "DELETE", body: body) { cancelled in
            let lostRace = cancelled.outcome == Outcome(.protocolError, "rtCode \(GCCSResultCode.noAuthenticationInProgress)")
            return lostRace ? .ok : cancelled.outcome
        }
    }

    /// UNSUBSCRIBE and DISCONNECT after a clean run (timed as `disconnect`), or a plain close after a failure.
    @inline(never)
    private func finish(_ outcome: Outcome) async -> Outcome {
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

    // MARK: Helpers

    /// Reads statuses until one of `targets` arrives, timing each; any other end of the stream fails the step.
    ///
    /// A failure is recorded on the first target's step, timed from the flow's start.
    @inline(never)
    private func awaitStatus(_ targets: Set<GCCSStatus>, until deadline: C.Instant, expiry: Outcome) async -> Outcome {
        guard let stomp else { return Outcome(.protocolError, "no status stream") }
        // Once for the whole stream: the socket hands each frame to `observe` where it reads it. Only the follower, the
        // socket and a failure cross the wait, in this small frame.
        let follower = stomp.follower(until: deadline) { [unowned self] in self.observe($0, until: targets) }
        var failure: (any Error)?
        do {
            try await stomp.socket.consume(follower)
        } catch {
            failure = error
        }
        return followed(follower, failure: failure, targets: targets, expiry: expiry)
    }

    /// The end of ``awaitStatus(_:until:expiry:)``: the session back from `follower`, and the wait's outcome, recorded on
    /// the first target's step when it failed, timed from the flow's start.
    @inline(never)
    private func followed(_ follower: StompFollower<C>, failure: (any Error)?, targets: Set<GCCSStatus>, expiry: Outcome) -> Outcome {
        let outcome: Outcome
        do {
            outcome = try stomp!.followed(follower, failure: failure)
        } catch .timeout {
            outcome = expiry
        } catch {
            outcome = error.outcome
        }
        if !outcome.isOK, let target = targets.min(by: { $0.rawValue < $1.rawValue }), let steps = GCCSAuthFlow.indices(of: target) {
            context.record(step: steps.sinceStart, start: tracker.flowStart, outcome: outcome)
        }
        return outcome
    }

    /// Takes one frame of the status stream: records a status, and says whether the stream reached one of `targets`
    /// or another end (nil: go on).
    private func observe(_ received: StompClient<C>.Received, until targets: Set<GCCSStatus>) -> Outcome? {
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

    /// Sends a JSON request in a child task (``apart(_:)``) and hands its answer to `settle`.
    ///
    /// The request is built and the answer read in synchronous functions, so that only they and the answer cross the
    /// wait in this frame: a task keeps the memory of its deepest chain of frames until it ends, and the REST steps'
    /// chain was the deepest the flow's own task went.
    @inline(never)
    private func post<T>(
        _ step: Step, path: String, method: String = "POST", body: JSONValue, then settle: (StepResult) -> T
    ) async -> T {
        settle(await Self.apart(request(step, path: path, method: method, body: body)))
    }

    @inline(never)
    private func request(_ step: Step, path: String, method: String, body: JSONValue) -> @Sendable () async -> StepResult {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json")
        headers.add("Accept", "application/json")
        let request = HTTPRequest(method: method, target: flow.basePath + path, headers: headers, body: body.serialized())
        let (context, step) = (self.context, GCCSAuthFlow.index(step))
        return { await context.exchange(step: step, request, classify: GCCSAuthFlow.classify) }
    }

    /// Runs a request in a child task of its own, so that its call chain's memory goes when the request is done.
    ///
    /// A task keeps every slab its async frames ever took until it ends, and a request's path through the context, the
    /// pool and the connection is the deepest the flow goes: in the flow's own task, it stayed with the user for the
    /// minute its status stream is held open. A child task's slabs are freed when it ends; it runs on the same executor
    /// (the task prefers its event loop) and costs a task's creation per request, a few a minute per user.
    ///
    @inline(never)
    private static func apart<T: Sendable>(_ work: @escaping @Sendable () async -> T) async -> T {
        await withTaskGroup(of: T.self) { group in
            group.addTask(operation: work)
            // The one child always gives a result.
            return await group.next()!
        }
    }

    /// The `enCode*` parameters, encrypted under this authentication's channel key as the SDK does.
    private func encode(_ value: String) -> String { GCCSFieldCipher.encrypt(value, channelKey: channelKey) }
}
