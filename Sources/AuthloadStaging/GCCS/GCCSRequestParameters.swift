import AuthloadCore
import AuthloadWire

/// What the GCCS service reads of a REST call's parameters: the JSON body's members, or a GET's query.
///
/// Read straight from the body's bytes (``JSONReader``): every call sent one, parsed whole into a tree to read two or
/// three strings of it. As reading the tree did: a member of another type counts as absent, a repeated one as its
/// last value, and a body that is not valid JSON as empty.
struct GCCSRequestParameters {
    var deviceID: String?
    var clientKey: String?
    var userKey: String?
    var channelKey: String?
    /// `isSecondaryCertification`: a boolean in a body; a query has none.
    var secondaryCertification: Bool?
    /// `enCodeCK`, `enCodeBK`, `enCodeDK`: the channel key, block key and device id, encrypted (``GCCSChannel/encodes(deviceID:in:)``).
    var encodedChannelKey: String?
    var encodedBlockKey: String?
    var encodedDeviceID: String?

    init() {}

    /// The members of a JSON body, read into `self` in place.
    init(body: [UInt8]) {
        do {
            try JSONReader.read(body) { reader throws(JSONParseError) in
                try reader.readMembers(into: &self) { reader, key, parameters throws(JSONParseError) in
                    switch key {
                    case "deviceId": parameters.deviceID = try reader.string()
                    case "clientKey": parameters.clientKey = try reader.string()
                    case "userKey": parameters.userKey = try reader.string()
                    case "channelKey": parameters.channelKey = try reader.string()
                    case "isSecondaryCertification": parameters.secondaryCertification = try reader.bool()
                    case "enCodeCK": parameters.encodedChannelKey = try reader.string()
                    case "enCodeBK": parameters.encodedBlockKey = try reader.string()
                    case "enCodeDK": parameters.encodedDeviceID = try reader.string()
                    default: try reader.skip()
                    }
                }
            }
        } catch {
            self = GCCSRequestParameters()
        }
    }

    /// The pairs of a query, each value a string.
    init(query pairs: [(String, String)]) {
        for (name, value) in pairs {
            switch name {
            case "deviceId": deviceID = value
            case "clientKey": clientKey = value
            case "userKey": userKey = value
            case "channelKey": channelKey = value
            // A query's values are strings, never the boolean a body's is.
            case "isSecondaryCertification": secondaryCertification = nil
            case "enCodeCK": encodedChannelKey = value
            case "enCodeBK": encodedBlockKey = value
            case "enCodeDK": encodedDeviceID = value
            default: continue
            }
        }
    }
}
