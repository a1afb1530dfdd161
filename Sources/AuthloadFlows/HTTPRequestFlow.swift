import AuthloadCore

/// One plain HTTP request per iteration: a health check, a static page, a throughput benchmark.
///
/// Success is the expected status; anything else is an HTTP error named by its status.
public struct HTTPRequestFlow: Flow {
    public struct Options: Sendable, Equatable {
        public var method = "GET"
        /// Prefixed with the target's base path.
        public var path = "/"
        public var headers = HTTPHeaders()
        public var body: [UInt8] = []
        public var expectedStatus = 200

        public init() {}
    }

    public let options: Options
    private let request: HTTPRequest
    public var stepNames: [String] { ["request"] }

    public init(options: Options, basePath: String = "") {
        self.options = options
        self.request = HTTPRequest(method: options.method, target: basePath + options.path, headers: options.headers, body: options.body)
    }

    public func run<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome where C.Duration == Duration {
        let expected = options.expectedStatus
        return await context.exchange(step: 0, request) { response in
            response.status == expected ? .ok : Outcome(.httpError, "\(response.status)")
        }.outcome
    }

    static func read(_ reader: ProfileReader, basePath: String) throws(ProfileError) -> HTTPRequestFlow {
        try reader.rejectUnknownKeys(allowed: ["name", "kind", "weight", "method", "path", "headers", "body", "expectStatus"])
        var options = Options()
        if let method = try reader.optional("method") {
            options.method = try method.string()
            guard !options.method.isEmpty, options.method.allSatisfy({ $0.isLetter && $0.isUppercase }) else {
                throw method.error("must be an upper-case HTTP method such as GET or POST")
            }
        }
        if let path = try reader.optional("path") {
            options.path = try path.string()
            guard options.path.hasPrefix("/") else { throw path.error("must start with '/'") }
        }
        if let headers = try reader.optional("headers") {
            for key in try headers.object().keys {
                options.headers.add(key, try headers.required(key).string())
            }
        }
        if let body = try reader.optional("body") { options.body = Array(try body.string().utf8) }
        if let status = try reader.optional("expectStatus") {
            options.expectedStatus = try status.int()
            guard (100...599).contains(options.expectedStatus) else { throw status.error("must be an HTTP status (100–599)") }
        }
        return HTTPRequestFlow(options: options, basePath: basePath)
    }
}
