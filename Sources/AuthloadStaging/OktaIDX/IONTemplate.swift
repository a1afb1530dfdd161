import AuthloadCore
import AuthloadWire

/// A serialized ION body with holes where one transaction's answer differs from another's of the same shape: its
/// state handle, the origin of its hrefs, its expiry, the user's name, an interaction code.
///
/// The service answers every IDX call with the transaction's state in ION, a tree of some hundred values; building
/// and serializing it for every answer was a tenth of a simulated soak's CPU. The tree of a shape (phase, what is
/// proven, the messages, the status) is built once with a marker in each hole, serialized, and cut at the markers;
/// an answer is the pieces with its values escaped between them, byte for byte the serialization of its own tree.
///
/// ```swift
/// let template = IONTemplate(serializing: tree)           // a tree whose holes hold IONTemplate.marker(.handle), …
/// let body = template.filled(IONTemplate.Values(handle: handle, origin: origin, expires: expires))
/// ```
struct IONTemplate: Sendable {
    /// What goes in a hole.
    enum Hole: UInt8, Sendable {
        case handle = 0x68 // h
        case origin = 0x6F // o
        case expires = 0x65 // e
        case username = 0x75 // u
        case code = 0x63 // c
        /// The tokens of a token answer, which is JSON rather than ION but as fixed in shape.
        case accessToken = 0x61 // a
        case refreshToken = 0x72 // r
        case idToken = 0x69 // i
    }

    /// One answer's values for the holes.
    struct Values {
        var handle = ""
        var origin = ""
        var expires = ""
        var username = ""
        var code = ""
        var accessToken = ""
        var refreshToken = ""
        var idToken = ""

        /// Appends the value for `hole`, escaped.
        func append(_ hole: Hole, to body: inout [UInt8]) {
            switch hole {
            case .handle: JSONValue.appendEscaped(handle, to: &body)
            case .origin: JSONValue.appendEscaped(origin, to: &body)
            case .expires: JSONValue.appendEscaped(expires, to: &body)
            case .username: JSONValue.appendEscaped(username, to: &body)
            case .code: JSONValue.appendEscaped(code, to: &body)
            case .accessToken: JSONValue.appendEscaped(accessToken, to: &body)
            case .refreshToken: JSONValue.appendEscaped(refreshToken, to: &body)
            case .idToken: JSONValue.appendEscaped(idToken, to: &body)
            }
        }
    }

    /// The serialization with the markers cut out, in one buffer: pieces kept as arrays of their own cost a retain and
    /// a release each for every answer.
    private let bytes: [UInt8]
    /// Where each hole lies in `bytes`, in order.
    private let holes: [(offset: Int, hole: Hole)]

    /// What a tree holds in place of a hole's value, anywhere inside a string. U+0001 is serialized as `\u0001`, which
    /// no other value of an ION body writes: the service's strings are its own and its options', with no control
    /// characters, and a client's values are filled in after the cut.
    static func marker(_ hole: Hole) -> String { "\u{1}" + String(UnicodeScalar(hole.rawValue)) }

    /// Cuts the serialization of `tree` at every marker.
    init(serializing tree: JSONValue) {
        let serialized = tree.serialized()
        let escape = Array(#"\u0001"#.utf8)
        var bytes: [UInt8] = []
        var holes: [(offset: Int, hole: Hole)] = []
        var start = 0
        var index = 0
        while index + escape.count < serialized.count {
            if serialized[index] == escape[0], serialized[index..<index + escape.count].elementsEqual(escape),
                let hole = Hole(rawValue: serialized[index + escape.count])
            {
                bytes += serialized[start..<index]
                holes.append((bytes.count, hole))
                index += escape.count + 1
                start = index
            } else {
                index += 1
            }
        }
        bytes += serialized[start...]
        self.bytes = bytes
        self.holes = holes
    }

    /// The body with `values` in its holes, each escaped as the serializer would have written it.
    func filled(_ values: Values) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(bytes.count + 64 * holes.count)
        bytes.withUnsafeBufferPointer { bytes in
            var start = 0
            for (offset, hole) in holes {
                body.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<offset]))
                values.append(hole, to: &body)
                start = offset
            }
            body.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        return body
    }
}

/// What the ION of an answer depends on besides the holes' values: answers of one shape share a template.
enum IONShape: Hashable, Sendable {
    case state(
        phase: OktaIDXTransaction.Phase, passwordDone: Bool, hasUser: Bool, status: Int, passcodeError: IDXMessage?,
        topError: IDXMessage?)
    case success
}
