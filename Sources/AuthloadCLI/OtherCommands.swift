import AuthloadCore
import AuthloadReport
import AuthloadStaging
import AuthloadTransport
import Foundation

/// `authload validate`: everything `run` checks, without traffic.
struct ValidateCommand {
    let profile: String
    let console: Console

    func execute() throws(CLIError) -> ExitCode {
        let loaded = try LoadedProfile.load(profile)
        let plan = loaded.plan
        let target: String
        switch plan.target {
        case .url(let url): target = url.description
        case .embedded: target = "the embedded staging server"
        }
        let flows = plan.flows.map { "\($0.name) (\($0.kind), weight \(Format.count(Int($0.weight))))" }.joined(separator: ", ")
        console.line("\(profile): OK — closed model, \(plan.load.users) users, ramp-up \(DurationText.format(plan.load.rampUp)), " +
            "duration \(DurationText.format(plan.load.duration)), target \(target); flows: \(flows)")
        return .success
    }
}

/// `authload serve`: the embedded staging server in the foreground until a signal.
struct ServeCommand {
    let options: Command.ServeOptions
    let console: Console

    func execute() async throws(CLIError) -> ExitCode {
        var configuration = StagingConfiguration()
        if let path = options.config {
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
                throw CLIError("cannot read \(path)", exitCode: .usage)
            }
            do {
                configuration = try StagingConfiguration.read(ProfileReader(path: "", value: JSONValue.parse(text)))
            } catch let error as JSONParseError {
                throw CLIError("\(path): \(error)", exitCode: .usage)
            } catch {
                throw CLIError("\(path): \(error)", exitCode: .usage)
            }
        }
        let server: HTTPServer
        let group: EventLoopGroup
        do {
            group = try EventLoopGroup()
            server = try HTTPServer(group: group, host: options.host, port: options.port, service: StagingServer(configuration: configuration))
        } catch {
            throw CLIError("cannot start the staging server: \(error)", exitCode: .runError)
        }
        console.line("authload staging server listening on http://\(Endpoint(host: server.host, port: server.port).hostHeader) (Ctrl-C to stop)")
        let stopped = AsyncFlag()
        let signals = SignalRelay { _ in stopped.set() }
        await stopped.wait()
        signals.cancel()
        server.close()
        group.shutdown()
        console.line("stopped")
        return .success
    }
}

/// `authload report`: rebuilds the report files from a result.json.
struct ReportCommand {
    let path: String
    let console: Console

    func execute() throws(CLIError) -> ExitCode {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        let json = isDirectory.boolValue ? (path as NSString).appendingPathComponent("result.json") : path
        guard exists else { throw CLIError("\(path): no such file or directory", exitCode: .usage) }
        do {
            let result = try ReportWriter.load(resultJSON: json)
            let files = try ReportWriter.write(result, to: (json as NSString).deletingLastPathComponent)
            console.line("report: \(files.html)")
            return .success
        } catch {
            throw CLIError("\(error)", exitCode: .usage)
        }
    }
}
