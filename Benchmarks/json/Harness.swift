// Reads the ION answers of an email login (the staging service's own bytes, captured once) over and over, as a
// flow does (`IDXResponse(body:)`) or into a tree (`JSONValue.parse`), or serializes their trees, for
// `json-instructions.sh` to count.
import AuthloadCore
import AuthloadWire
import Foundation

let arguments = CommandLine.arguments
let directory = arguments[1]
let rounds = Int(arguments[2])!
let mode = arguments[3]
let bodies = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }.sorted().map {
    try Array(Data(contentsOf: URL(fileURLWithPath: directory + "/" + $0)))
}
let trees = mode == "serialize" ? bodies.map { try? JSONValue.parse($0) } : []
var read = 0
for _ in 0..<rounds {
    for (index, body) in bodies.enumerated() {
        switch mode {
        case "idx": read += IDXResponse(body: body)?.remediations.count ?? 0
        case "serialize": read += trees[index]?.serialized().count ?? 0
        default: read += (try? JSONValue.parse(body))?.objectValue?.count ?? 0
        }
    }
}
print("\(mode): \(bodies.count) bodies × \(rounds), \(read) read")
