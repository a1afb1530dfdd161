import AuthloadCore

/// A server's capacity as a state machine without I/O: a fixed number of workers, each serving one
/// request at a time for its service time, and a bounded queue in front of them.
///
/// A request arriving at `now` goes to the worker that frees first; it starts at `max(now, that
/// worker's free time)` and holds the worker for its service time. Because every request is scheduled
/// when it arrives, the machine needs no timers: the caller delays the reply by the returned latency on
/// its own clock. When `queue` requests are already waiting, a new one is rejected at once. Saturation is
/// therefore exact and predictable: 8 workers at 10 ms serve 800 requests/s, and beyond that the wait
/// grows until the queue is full.
///
/// ```swift
/// var model = CapacityModel(options: .init(workers: 8, queue: 1000))
/// model.admit(now: .zero, serviceTime: .milliseconds(10))   // .serve(after: 10ms)
/// ```
public struct CapacityModel: Sendable {
    /// The profile's `target.embedded.capacity`.
    public struct Options: Sendable, Equatable {
        public var workers: Int
        /// Requests that may wait for a worker; one more is rejected (503).
        public var queue: Int
        /// The time a request holds a worker; nil takes each service's own latency as its service time.
        public var serviceTime: LatencyModel?

        public init(workers: Int, queue: Int = 1000, serviceTime: LatencyModel? = nil) {
            self.workers = workers
            self.queue = queue
            self.serviceTime = serviceTime
        }

        /// Reads `{"workers": 8, "queue": 1000, "serviceTime": "10ms"}`.
        public static func read(_ reader: ProfileReader) throws(ProfileError) -> Options {
            try reader.rejectUnknownKeys(allowed: ["workers", "queue", "serviceTime"])
            var options = Options(workers: try reader.required("workers").positiveInt())
            if let queue = try reader.optional("queue") {
                options.queue = try queue.int()
                guard options.queue >= 0 else { throw queue.error("must be 0 or more requests, found \(options.queue)") }
            }
            if let service = try reader.optional("serviceTime") { options.serviceTime = try LatencyModel.read(service) }
            return options
        }
    }

    public enum Admission: Sendable, Equatable {
        /// Served: the reply comes `after` from now, of which `waited` was spent in the queue.
        case serve(after: Duration, waited: Duration)
        /// The queue was full.
        case reject
    }

    public let options: Options
    /// When each worker is next free, microseconds from the model's origin, as a min-heap.
    private var freeAt: [Int64]
    /// Start times of the requests admitted but not yet started, oldest first (they start in order).
    private var waiting: [Int64] = []
    private var waitingHead = 0

    public init(options: Options) {
        precondition(options.workers > 0 && options.queue >= 0)
        self.options = options
        self.freeAt = Array(repeating: 0, count: options.workers)
    }

    /// Requests waiting for a worker at the last admission.
    public var queued: Int { waiting.count - waitingHead }

    /// Admits a request arriving at `now` (from the model's origin; never earlier than the previous one).
    public mutating func admit(now: Duration, serviceTime: Duration) -> Admission {
        let arrival = now.microseconds
        while waitingHead < waiting.count && waiting[waitingHead] <= arrival { waitingHead += 1 }
        if waitingHead > 1024 && waitingHead * 2 > waiting.count {
            waiting.removeFirst(waitingHead)
            waitingHead = 0
        }
        let start = Swift.max(arrival, freeAt[0])
        if start > arrival && queued >= options.queue { return .reject }
        let finish = start + Swift.max(0, serviceTime.microseconds)
        replaceMin(with: finish)
        if start > arrival { waiting.append(start) }
        return .serve(after: .microseconds(finish - arrival), waited: .microseconds(start - arrival))
    }

    /// Replaces the heap's smallest element and sifts it down.
    private mutating func replaceMin(with value: Int64) {
        freeAt[0] = value
        var index = 0
        let count = freeAt.count
        while true {
            let left = 2 * index + 1
            let right = left + 1
            var smallest = index
            if left < count && freeAt[left] < freeAt[smallest] { smallest = left }
            if right < count && freeAt[right] < freeAt[smallest] { smallest = right }
            if smallest == index { return }
            freeAt.swapAt(index, smallest)
            index = smallest
        }
    }
}
