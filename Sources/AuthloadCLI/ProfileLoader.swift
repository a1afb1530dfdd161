import AuthloadCore
import AuthloadFlows
import AuthloadStaging
import AuthloadTransport
import AuthloadWire
import Foundation

/// A profile read, validated and turned into the pieces a run needs.
struct LoadedProfile {
    var plan: RunPlan
    var flows: [any Flow]
    var staging: StagingConfiguration?
    /// The profile file's digest (``PlanRecord/profileDigest``): shards of one run must have read the same bytes.
    var digest: String
    /// How connections to an https target check it and present themselves, with `target.tls`'s files read.
    var tls = TLSClientConfiguration()
    /// What the profile allows but will likely go wrong (a single-use invitation code redeemed every iteration):
    /// `validate` and `run` print them, and neither refuses the profile for them.
    var warnings: [String] = []

    /// Reads and validates `path`; every problem is a usage error naming the file and the field.
    static func load(_ path: String) throws(CLIError) -> LoadedProfile {
        let fileName = (path as NSString).lastPathComponent
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError("cannot read profile \(path): no such file or not readable", exitCode: .usage)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CLIError("\(fileName): not UTF-8 text", exitCode: .usage)
        }
        do throws(ProfileError) {
            // Files a profile names (users.csv) are found from the current directory, then from the profile's.
            let profileDirectory = (path as NSString).deletingLastPathComponent
            let readFile = { (name: String) -> String? in
                let candidates = name.hasPrefix("/") ? [name] : [name, (profileDirectory as NSString).appendingPathComponent(name)]
                return candidates.lazy.compactMap { FileManager.default.contents(atPath: $0) }.first.flatMap {
                    String(data: $0, encoding: .utf8)
                }
            }
            let plan = try Profile.parse(text, fileName: fileName, readFile: readFile)
            var staging: StagingConfiguration?
            let basePath: String
            switch plan.target {
            case .url(let url): basePath = url.basePath
            case .embedded(let options):
                staging = try StagingConfiguration.read(options)
                basePath = ""
            }
            if let invalid = SocketTransportConfiguration.invalidSourceAddress(in: plan.connections.sourceAddresses) {
                throw ProfileError(
                    "connections.sourceAddresses[\(invalid.index)]",
                    "\"\(invalid.address)\" is not a numeric IPv4 or IPv6 address (e.g. \"127.0.0.2\")")
            }
            let flows = try plan.flows.map { plan throws(ProfileError) in try FlowCatalog.make(plan, target: basePath) }
            try Runner<ContinuousClock>.validate(plan, flows: flows)
            try plan.users.check(
                users: plan.load.identitiesNeeded,
                flowsNeeding: flows.enumerated().map { ("flows[\($0.offset)]", $0.element.userFields) })
            let digest = Digest.sha256([UInt8](data)).prefix(8).map { String(format: "%02x", $0) }.joined()
            var loaded = LoadedProfile(plan: plan, flows: flows, staging: staging, digest: digest, warnings: warnings(plan, flows: flows))
            loaded.tls = try tlsConfiguration(plan, readFile: readFile)
            return loaded
        } catch {
            throw CLIError(error.path == fileName ? error.description : "\(fileName): \(error)", exitCode: .usage)
        }
    }

    /// Reads `target.tls`'s files, once, and checks that OpenSSL can use them: an unreadable or malformed one
    /// is a profile error naming the key and the file, before any connection fails over it.
    static func tlsConfiguration(_ plan: RunPlan, readFile: (String) -> String?) throws(ProfileError) -> TLSClientConfiguration {
        let tls = plan.connections.tls
        func read(_ key: String, _ file: String?) throws(ProfileError) -> String? {
            guard let file else { return nil }
            guard let text = readFile(file) else {
                throw ProfileError("target.tls.\(key)", "cannot read \"\(file)\" (no such file, not readable, or not text)")
            }
            return text
        }
        var configuration = TLSClientConfiguration(
            skipsCertificateVerification: tls.insecureSkipTLSVerify, resumeSessions: tls.resumeSessions)
        if let ca = try read("caFile", tls.caFile) {
            configuration.trustedCertificatesPEM = [ca]
            configuration.trustsSystemRoots = tls.addSystemRoots
        }
        configuration.clientCertificatePEM = try read("clientCertificate", tls.clientCertificate)
        configuration.clientKeyPEM = try read("clientKey", tls.clientKey)
        if let name = tls.serverName, case .url(let url) = plan.target { configuration.serverNames = [url.endpoint.host: name] }
        do throws(TLSConfigurationError) {
            try TLSClientContext.check(configuration)
        } catch {
            let (key, file) =
                switch error.part {
                case .trustedCertificates: ("caFile", tls.caFile ?? "")
                case .clientCertificate: ("clientCertificate", tls.clientCertificate ?? "")
                case .clientKey: ("clientKey", tls.clientKey ?? "")
                }
            throw ProfileError("target.tls.\(key)", "\"\(file)\" \(error.problem)")
        }
        return configuration
    }

    /// A closed-model user runs flow after flow: a single-use field (an invitation code) that does not change with
    /// the iteration is redeemed again by the user's second iteration, which a server that enforces it refuses.
    /// An open-model arrival is a new user running one flow, so `{n}` alone gives each its own.
    static func warnings(_ plan: RunPlan, flows: [any Flow]) -> [String] {
        guard plan.load.model == .closed else { return [] }
        return zip(plan.flows.indices, flows).flatMap { index, flow in
            flow.singleUseFields.sorted().filter { !plan.users.variesByIteration($0) }.map { field in
                "flows[\(index)] (\(plan.flows[index].name)): \(field) is single-use, but each user sends the same one at every "
                    + "iteration, so a server that enforces it answers 410 from a user's second iteration on; "
                    + "give it a template with {iteration}, e.g. \"\(field)\": \"1{n:5}{iteration:3}\""
            }
        }
    }
}
