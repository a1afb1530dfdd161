import AuthloadCore
import AuthloadWire

/// One GCCS authentication of one user: what the flow holds between its steps (keys, the STOMP
/// session, the status tracker), and the REST steps; the status stream's opening, waits and goodbye are in
/// `GCCSIteration+Stream.swift`.
///
/// The steps run up to a wait on the status stream and say what comes after it (``Next``): ``run()`` waits on its own
/// task, ``start()`` hands each wait to the engine when the socket can follow the stream on its loop
/// (``GCCSStatusHold``), so that no task waits the minute the stream is held.
///
/// A class, used by one task: its state lives in one allocation of its own size. As a generic struct it lived in the
/// task's async frames, whose memory a task keeps until it ends, in 1,000-byte slabs each frame of unknown size
/// started anew: with the socket held a minute, a user's task held two more slabs.
final class GCCSIteration<C: Clock> where C.Duration == Duration {
    typealias Step = GCCSAuthFlow.Step

    let flow: GCCSAuthFlow
    let context: FlowContext<C>
    let userKey: String
    let userIndex: Int
    let cancels: Bool
    var tracker: GCCSStatusTracker<C.Instant>
    /// The STOMP client once the stream is open; nil while a follower has its session (``follow(_:)``).
    var stomp: StompClient<C>? {
        get { stream?.client }
        set { stream = newValue.map(Stream.init) }
    }
    /// Boxed: inline, the client's room (about 200 bytes) stayed in the object while a held wait's follower has it.
    private var stream: Stream?
    private(set) var channelKey = ""
    private var blockKey = ""
    /// What `auth/nodes` asked the app to do on the device before completing.
    private var authType: Int?

    init(flow: GCCSAuthFlow, context: FlowContext<C>, userKey: String, userIndex: Int, cancels: Bool) {
        self.flow = flow
        self.context = context
        self.userKey = userKey
        self.userIndex = userIndex
        self.cancels = cancels
        tracker = GCCSStatusTracker(flowStart: context.flowStart)
    }

    /// Made for each request that sends it rather than kept: a held iteration would keep the string's memory.
    var deviceID: String { GCCSAuthFlow.deviceID(ofUser: userIndex) }
    var options: GCCSAuthFlow.Options { flow.options }
    var paths: GCCSPaths { flow.options.paths }
    var clock: C { context.clock }

    /// The end of the current step: the step timeout from now, or the flow's deadline if sooner.
    var stepDeadline: C.Instant { min(clock.now.advanced(by: context.stepTimeout), context.deadline) }

    /// What the steps come to: the iteration's outcome (before the goodbye), or a wait on the status stream.
    enum Next {
        case done(Outcome)
        case follow(StatusWait)
    }

    /// A wait on the status stream: until one of `targets` arrives or `deadline` (failing with `expiry`), then `then`.
    struct StatusWait {
        var targets: StatusTargets
        var deadline: C.Instant
        var expiry: Outcome
        var then: AfterStatus
    }

    private final class Stream {
        let client: StompClient<C>

        init(_ client: StompClient<C>) { self.client = client }
    }

    /// The one or two statuses a wait ends on, kept without a set's allocation for the minute the wait is held.
    struct StatusTargets: ExpressibleByArrayLiteral {
        let first: GCCSStatus
        let second: GCCSStatus?

        init(arrayLiteral statuses: GCCSStatus...) {
            precondition((1...2).contains(statuses.count), "a wait ends on one or two statuses")
            first = statuses[0]
            second = statuses.count > 1 ? statuses[1] : nil
        }

        func contains(_ status: GCCSStatus) -> Bool { status == first || status == second }

        /// The one whose step records the wait's failure: the first by name.
        var recorded: GCCSStatus { second.map { $0.rawValue < first.rawValue ? $0 : first } ?? first }
    }

    /// What comes once a status wait reached its target.
    enum AfterStatus {
        /// Verified (or reached the status a cancelling user waits for): complete, or cancel.
        case verified
        /// `AuthCompleted`: the result token.
        case completed
        /// `AuthCanceled` (or `AuthCompleted` that beat the cancel): the end.
        case cancelled
    }

    /// The whole iteration on the calling task, which each status wait suspends (the open model's visits).
    ///
    /// The steps are functions of their own kept out of line: inlined, their frames were one of 2.7 KB, which the task
    /// kept (in a slab of its own) for the whole minute the status stream is held.
    @inline(never)
    func run() async -> Outcome {
        var next = await begin()
        while true {
            switch next {
            case .done(let outcome): return await finish(outcome)
            case .follow(let wait): next = await after(wait, await awaitStatus(wait))
            }
        }
    }

    /// The iteration up to its end or its first status wait, handed over as a ``GCCSStatusHold`` when the socket can
    /// follow the stream on its own loop.
    @inline(never)
    func start() async -> FlowProgress {
        await goOn(await begin())
    }

    /// The iteration from `next` up to its end or its next status wait that the socket can follow on its own.
    @inline(never)
    func goOn(_ next: Next) async -> FlowProgress {
        var next = next
        while true {
            switch next {
            case .done(let outcome):
                return .ended(await finish(outcome))
            case .follow(let wait):
                if let hold = GCCSStatusHold(self, wait: wait) { return .held(hold) }
                next = await after(wait, await awaitStatus(wait))
            }
        }
    }

    /// C0–C3: up to the wait for verification.
    @inline(never)
    private func begin() async -> Next {
        var outcome = await requestChannel()
        if outcome.isOK { outcome = await openStatusStream() }
        guard outcome.isOK else { return .done(outcome) }
        return await askForVerification()
    }

    /// What follows a status wait that ended with `outcome`.
    @inline(never)
    func after(_ wait: StatusWait, _ outcome: Outcome) async -> Next {
        guard outcome.isOK else { return .done(outcome) }
        switch wait.then {
        case .verified: return cancels ? await cancel() : await complete()
        case .completed: return .done(await fetchToken())
        case .cancelled: return .done(outcome)
        }
    }

    // MARK: Steps

    /// C0: `POST /auth` → channel and block keys.
    @inline(never)
    private func requestChannel() async -> Outcome {
        await post(.auth, path: paths.auth, body: authBody(), then: keepKeys)
    }

    @inline(never)
    private func authBody() -> [UInt8] {
        var body = JSONObjectWriter(reservingCapacity: 128)
        body.add("clientKey", options.clientKey)
        body.add("userKey", userKey)
        body.add("deviceId", deviceID)
        body.add("authPlatform", "CMMAPF002")
        return body.finish()
    }

    /// Keeps the channel and block keys `POST /auth` answered.
    @inline(never)
    private func keepKeys(_ answer: Answer) -> Outcome {
        guard answer.result.outcome.isOK else { return answer.result.outcome }
        guard let data = answer.envelope?.data,
            let channel = data["channelKey"]?.stringValue, !channel.isEmpty,
            let block = data["blockKey"]?.stringValue, !block.isEmpty
        else {
            return Outcome(.protocolError, "auth answered without channelKey and blockKey")
        }
        channelKey = channel
        blockKey = block
        return .ok
    }

    /// C3: `POST /auth/nodes`, then C4: the status stream up to verification (or the status a cancelling user waits
    /// for), for as long as the answer says it may take.
    @inline(never)
    private func askForVerification() async -> Next {
        tracker.sent(at: clock.now)
        let body = nodesBody()
        // Sent once: a held iteration need not keep it.
        blockKey = ""
        return await post(.nodes, path: paths.nodes, body: body, then: verificationWait)
    }

    /// The `enCode*` parameters are encrypted under this authentication's channel key as the SDK does, the key set up
    /// once for the three.
    @inline(never)
    private func nodesBody() -> [UInt8] {
        let cipher = GCCSFieldCipher.Keyed(channelKey: channelKey, encrypting: true)
        let deviceID = self.deviceID
        var body = deviceBody(reservingCapacity: 256)
        body.add("enCodeCK", cipher.encrypt(channelKey))
        body.add("enCodeBK", cipher.encrypt(blockKey))
        body.add("enCodeDK", cipher.encrypt(deviceID))
        body.add("userKey", userKey)
        return body.finish()
    }

    /// How long the status stream may take to verify, from the `auth/nodes` answer that came now.
    @inline(never)
    private func verificationWait(_ answer: Answer) -> Next {
        guard answer.result.outcome.isOK else { return .done(answer.result.outcome) }
        let answered = clock.now
        let data = answer.envelope?.data
        authType = data?["authType"]?.intValue
        // Like the SDK: a local timer of authTimeRemaining from the answer; without one, the flow's deadline rules.
        let remaining = data?["authTimeRemaining"]?.intValue
        let authDeadline = remaining.map { answered.advanced(by: .milliseconds($0)) }
        let deadline = min(authDeadline ?? context.deadline, context.deadline)
        let expiry =
            authDeadline.map { $0 <= context.deadline } == true
            ? Outcome(.timeout, "AuthTimeout") : Outcome(.timeout, "flow deadline passed")
        let target = cancels ? options.cancelAfter : .completeVerificationOfNodes
        return .follow(StatusWait(targets: [target], deadline: deadline, expiry: expiry, then: .verified))
    }

    /// C5–C6: `POST /auth/complete`, then `AuthCompleted` (and after it C7, the result token).
    @inline(never)
    private func complete() async -> Next {
        let completed = await askToComplete()
        guard completed.isOK else { return .done(completed) }
        let expiry = Outcome(.timeout, "no AuthCompleted within the step timeout")
        return .follow(StatusWait(targets: [.authCompleted], deadline: stepDeadline, expiry: expiry, then: .completed))
    }

    /// C5: `POST /auth/complete`.
    @inline(never)
    private func askToComplete() async -> Outcome {
        tracker.sent(at: clock.now)
        return await post(.complete, path: paths.complete, body: completeBody()) { $0.result.outcome }
    }

    @inline(never)
    private func completeBody() -> [UInt8] {
        var body = deviceBody(reservingCapacity: 128)
        body.add("isSecondaryCertification", .bool(options.secondaryCertification.value(for: authType)))
        return body.finish()
    }

    /// C7: `GET /auth`, the result token.
    @inline(never)
    private func fetchToken() async -> Outcome {
        await Self.apart(tokenRequest()).outcome
    }

    @inline(never)
    private func tokenRequest() -> @Sendable () async -> StepResult {
        let target = PercentEncoding.target(
            flow.basePath + paths.auth, query: [("deviceId", deviceID), ("clientKey", options.clientKey), ("channelKey", channelKey)])
        let context = self.context
        let request = HTTPRequest(method: "GET", target: target)
        return {
            await context.exchange(step: GCCSAuthFlow.index(.token), request) { response in
                let envelope = GCCSEnvelope(body: response.body)
                let outcome = GCCSAuthFlow.classify(response, envelope: envelope)
                guard outcome.isOK else { return outcome }
                let token = envelope?.data.stringValue ?? ""
                return token.isEmpty ? Outcome(.protocolError, "no result token") : .ok
            }
        }
    }

    /// C8: `DELETE /auth`, then whichever end the server reports: `AuthCanceled`, or `AuthCompleted` when
    /// the verification finished first (then the cancel answers 5019). Never both.
    @inline(never)
    private func cancel() async -> Next {
        let cancelled = await askToCancel()
        guard cancelled.isOK else { return .done(cancelled) }
        let expiry = Outcome(.timeout, "no AuthCanceled within the step timeout")
        return .follow(StatusWait(targets: [.authCanceled, .authCompleted], deadline: stepDeadline, expiry: expiry, then: .cancelled))
    }

    /// C8: `DELETE /auth`; a cancel that lost the race to the verification (5019) is OK too.
    @inline(never)
    private func askToCancel() async -> Outcome {
        tracker.sent(at: clock.now)
        return await post(.cancel, path: paths.auth, method: "DELETE", body: cancelBody()) { cancelled in
            let lostRace = cancelled.result.outcome == Outcome(.protocolError, "rtCode \(GCCSResultCode.noAuthenticationInProgress)")
            return lostRace ? .ok : cancelled.result.outcome
        }
    }

    /// A request body's first members, the same in every step: the language, the client's key and the device.
    private func deviceBody(reservingCapacity capacity: Int) -> JSONObjectWriter {
        var body = JSONObjectWriter(reservingCapacity: capacity)
        body.add("lang", options.lang)
        body.add("clientKey", options.clientKey)
        body.add("deviceId", deviceID)
        return body
    }

    @inline(never)
    private func cancelBody() -> [UInt8] {
        deviceBody(reservingCapacity: 96).finish()
    }

    // MARK: Helpers

    /// Sends a JSON request (`body`, written member by member as the SDK orders them) in a child task (``apart(_:)``) and hands its answer to `settle`.
    ///
    /// The request is built and the answer read in synchronous functions, so that only they and the answer cross the
    /// wait in this frame: a task keeps the memory of its deepest chain of frames until it ends, and the REST steps'
    /// chain was the deepest the flow's own task went.
    @inline(never)
    private func post<T>(
        _ step: Step, path: String, method: String = "POST", body: [UInt8], then settle: (Answer) -> T
    ) async -> T {
        settle(await Self.apart(request(step, path: path, method: method, body: body)))
    }

    @inline(never)
    private func request(_ step: Step, path: String, method: String, body: [UInt8]) -> @Sendable () async -> Answer {
        let request = HTTPRequest(method: method, target: flow.basePath + path, headers: GCCSAuthFlow.jsonHeaders, body: body)
        let (context, step) = (self.context, GCCSAuthFlow.index(step))
        return {
            var envelope: GCCSEnvelope?
            let result = await context.exchange(step: step, request) { response in
                envelope = GCCSEnvelope(body: response.body)
                return GCCSAuthFlow.classify(response, envelope: envelope)
            }
            return Answer(result: result, envelope: envelope)
        }
    }

    /// A REST step's result, with its body as an envelope once: the step's classification and what the flow reads of the
    /// answer (keys, the time it may take) each parsed it.
    struct Answer: Sendable {
        var result: StepResult
        var envelope: GCCSEnvelope?
    }

    /// Runs a request in a child task of its own, so that its call chain's memory goes when the request is done.
    ///
    /// A task keeps every slab its async frames ever took until it ends, and a request's path through the context, the
    /// pool and the connection is the deepest the flow goes: in the flow's own task, it stayed with the user for the
    /// minute its status stream is held open. A child task's slabs are freed when it ends; it runs on the same executor
    /// (the task prefers its event loop) and costs a task's creation per request, a few a minute per user.
    ///
    /// Not in a simulation, where users cost CPU and the memory did not show (the same peak RSS for the 30-minute
    /// GCCS profile): there the child was a tenth of the flow's CPU.
    @inline(never)
    static func apart<T: Sendable>(_ work: @escaping @Sendable () async -> T) async -> T {
        if C.self == SimulationClock.self { return await work() }
        return await withTaskGroup(of: T.self) { group in
            group.addTask { await work() }
            // The one child always gives a result.
            return await group.next()!
        }
    }
}
