// libFuzzer target for HPACK (RFC 7541): HPACKDecoder with its dynamic table and Huffman decoding, and
// HPACKEncoder, whose output every decoded list must survive.
//
// Input: one control byte (small or default table and header-list limits, how the bytes are cut into
// header blocks, whether the encoder uses Huffman), a seed for the cuts, then the blocks' bytes.
// Invariants beyond "does not crash":
// - after an error other than headerListTooLarge the decoder throws that same error on every later block;
// - no decoded list is larger than the header-list limit, and the dynamic table never exceeds its limit;
// - every decoded list, encoded again and decoded by a fresh pair, gives the same names and values, and the
//   encoder's and that decoder's tables stay equal;
// - the bytes a string decodes to, Huffman coded again, decode back to the same bytes.
import AuthloadWire

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHPACK(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let control = input.byte()
    let seed = input.byte()
    let bytes = input.rest

    let small = control & 1 != 0
    let tableSize = small ? Int(control >> 4) * 16 : 4096
    let listSize = small ? Int(control >> 2) * 8 : 64 * 1024
    let blocks = control & 2 != 0 ? pieces(bytes.count, seed: seed) : [0..<bytes.count]
    let huffman = control & 4 != 0

    var decoder = HPACKDecoder(maxTableSize: tableSize, maxHeaderListSize: listSize)
    var encoder = HPACKEncoder(maxTableSize: tableSize, huffman: huffman)
    var mirror = HPACKDecoder(maxTableSize: tableSize, maxHeaderListSize: Int.max)
    var fatal: HPACKError?
    for block in blocks {
        let headers: [HPACKHeader]
        do throws(HPACKError) {
            headers = try decoder.decode(bytes[block])
            require(fatal == nil, "decoder went on after \(fatal!)")
        } catch {
            if let fatal {
                require(error == fatal, "decoder threw \(error) after \(fatal)")
            } else {
                require(error.offset >= 0 && error.offset <= block.count, "error offset \(error.offset) outside the block")
                if error.reason != .headerListTooLarge { fatal = error }
            }
            continue
        }
        require(headers.reduce(0) { $0 + $1.size } <= listSize, "decoded list over the \(listSize)-byte limit")
        require(decoder.dynamicTableSize <= decoder.dynamicTableLimit, "table of \(decoder.dynamicTableSize) over its limit")
        require(decoder.dynamicTableLimit <= tableSize, "table limit \(decoder.dynamicTableLimit) over \(tableSize)")

        let again: [HPACKHeader]
        do throws(HPACKError) {
            again = try mirror.decode(encoder.encode(headers))
        } catch {
            require(false, "re-encoded \(headers) does not decode: \(error)")
            return 0
        }
        require(
            again.map { [$0.name, $0.value] } == headers.map { [$0.name, $0.value] },
            "re-encoded \(headers) decodes as \(again)")
        require(mirror.dynamicTableEntries == encoder.dynamicTableEntries, "encoder and decoder tables differ")
    }
    return 0
}
