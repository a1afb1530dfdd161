import AuthloadCore
import AuthloadStaging
import AuthloadTesting
import AuthloadWire
import Testing

/// The staging service's REST contract (docs/protocols.md, GCCS), called directly through an in-process client.
@Suite("GCCS staging service", .timeLimit(.minutes(1)))
struct GCCSServiceTests {
    let clock = ManualClock()

    func client(_ configure: (inout GCCSService.Options) -> Void = { _ in }) -> (any HTTPClient, GCCSService) {
        var configuration = StagingConfiguration()
        configure(&configuration.gccs)
        let server = StagingServer(configuration: configuration)
        return (InProcessHost(clock: clock, service: server).makeClient(for: Endpoint(host: "staging", port: 80)), server.gccs)
    }

    func call(_ client: any HTTPClient, _ method: String, _ path: String, _ body: JSONValue = .null) async throws -> GCCSEnvelope {
        let request =
            method == "GET"
            ? HTTPRequest(method: method, target: path)
            : HTTPRequest(method: method, target: path, headers: ["Content-Type": "application/json"], body: body.serialized())
        let response = try await client.execute(request, timeout: .seconds(1))
        return try #require(GCCSEnvelope(body: response.body), "\(response.status) \(String(decoding: response.body, as: UTF8.self))")
    }

    /// An `auth/nodes` body for the channel `opened` answered, its fields encrypted as the SDK does, or with `encode` instead.
    func nodes(_ deviceID: String, _ opened: GCCSEnvelope, encode: ((String, String) -> String)? = nil) -> JSONValue {
        let channelKey = opened.data["channelKey"]?.stringValue ?? ""
        let seal = encode ?? { value, key in GCCSFieldCipher.encrypt(value, channelKey: key) }
        return [
            "deviceId": .string(deviceID), "enCodeCK": .string(seal(channelKey, channelKey)),
            "enCodeBK": .string(seal(opened.data["blockKey"]?.stringValue ?? "", channelKey)),
            "enCodeDK": .string(seal(deviceID, channelKey))
        ]
    }

    @Test("auth/nodes refuses enCode* fields that are not the keys and device id under AES-256-CBC (5020), unless told not to check")
    func encodedFields() async throws {
        let plain: (String, String) -> String = { value, _ in Base64.encoded(Array(value.utf8)) }
        let (client, _) = client()
        let opened = try await call(client, "POST", "/api/v3/auth", ["deviceId": "d1"])
        #expect(try await call(client, "POST", "/api/v3/auth/nodes", nodes("d1", opened, encode: plain)).rtCode == 5020)
        #expect(try await call(client, "POST", "/api/v3/auth/nodes", nodes("d2", opened)).rtCode == 2004, "another device's channel")
        // Each field under the right key, but every one holding the channel key.
        let swapped = nodes("d1", opened) { _, key in GCCSFieldCipher.encrypt(key, channelKey: key) }
        #expect(try await call(client, "POST", "/api/v3/auth/nodes", swapped).rtCode == 5020)
        #expect(try await call(client, "POST", "/api/v3/auth/nodes", nodes("d1", opened)).rtCode == 0)

        let (lenient, _) = self.client { $0.verifyEncodedFields = false }
        let other = try await call(lenient, "POST", "/api/v3/auth", ["deviceId": "d1"])
        #expect(try await call(lenient, "POST", "/api/v3/auth/nodes", nodes("d1", other, encode: plain)).rtCode == 0)
    }

    @Test("auth opens a channel with keys; calls for an unknown device answer 2004; a cancel with nothing pending 5019")
    func channelLifecycle() async throws {
        let (client, service) = client()
        let opened = try await call(client, "POST", "/api/v3/auth", ["clientKey": "k", "userKey": "u", "deviceId": "d1"])
        #expect(opened.rtCode == 0)
        #expect(opened.data["channelKey"]?.stringValue?.count == 32)
        #expect(opened.data["blockKey"]?.stringValue?.count == 16)
        #expect(service.openChannels == 1)
        #expect(try await call(client, "POST", "/api/v3/auth/nodes", ["deviceId": "nobody"]).rtCode == 2004)
        #expect(try await call(client, "POST", "/api/v3/auth/complete", ["deviceId": "d1"]).rtCode == 5010, "not verified yet")
        #expect(try await call(client, "GET", "/api/v3/auth?deviceId=d1&channelKey=wrong").rtCode == 2004)
        #expect(try await call(client, "DELETE", "/api/v3/auth", ["deviceId": "d1"]).rtCode == 0)
        #expect(try await call(client, "DELETE", "/api/v3/auth", ["deviceId": "d1"]).rtCode == 5019)
        #expect(try await call(client, "DELETE", "/api/v3/auth", ["deviceId": "d2"]).rtCode == 5019)
    }

    @Test("a missing deviceId is a parameter error and a wrong client key 2000, when the service checks keys")
    func parameters() async throws {
        let (client, _) = client { $0.clientKey = "right" }
        #expect(try await call(client, "POST", "/api/v3/auth", ["clientKey": "right"]).rtCode == 2002)
        #expect(try await call(client, "POST", "/api/v3/auth", ["clientKey": "wrong", "deviceId": "d"]).rtCode == 2000)
        #expect(try await call(client, "POST", "/api/v3/auth", ["clientKey": "right", "deviceId": "d"]).rtCode == 0)
    }

    @Test("a second auth/nodes for a running verification is refused with 2010")
    func verificationTwice() async throws {
        let (client, _) = client()
        let opened = try await call(client, "POST", "/api/v3/auth", ["deviceId": "d1"])
        #expect(try await call(client, "POST", "/api/v3/auth/nodes", nodes("d1", opened)).rtCode == 0)
        #expect(try await call(client, "POST", "/api/v3/auth/nodes", nodes("d1", opened)).rtCode == 2010)
    }

    @Test("auth/nodes tells the client how long it has")
    func authTimeRemaining() async throws {
        let (client, _) = client { $0.authTimeRemaining = .seconds(45) }
        let opened = try await call(client, "POST", "/api/v3/auth", ["deviceId": "d1"])
        #expect(try await call(client, "POST", "/api/v3/auth/nodes", nodes("d1", opened)).data["authTimeRemaining"]?.intValue == 45_000)
    }

    @Test("the WebSocket is refused for an unknown channel, and for an injected share with 503")
    func socketRefusals() async throws {
        let (client, _) = client()
        await #expect(throws: WebSocketUpgradeRejected.self) {
            _ = try await client.openWebSocket(
                HTTPRequest(method: "GET", target: "/ws/v3/app/websocket?deviceId=x&channelKey=y"),
                protocols: [], timeout: .seconds(1))
        }
        let (rejecting, _) = self.client { $0.rejectRate = 1 }
        let opened = try await call(rejecting, "POST", "/api/v3/auth", ["deviceId": "d1"])
        let key = try #require(opened.data["channelKey"]?.stringValue)
        do {
            _ = try await rejecting.openWebSocket(
                HTTPRequest(method: "GET", target: "/ws/v3/app/websocket?deviceId=d1&channelKey=\(key)"),
                protocols: [], timeout: .seconds(1))
            Issue.record("the upgrade should have been refused")
        } catch let rejected as WebSocketUpgradeRejected {
            #expect(rejected.response.status == 503)
        }
    }
}
