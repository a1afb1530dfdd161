import AuthloadWire

extension String {
    /// This path with every `placeholder` (`{code}`, `{sessionid}`) replaced by `value`: what `replacing(_:with:)`
    /// gives, without the string-processing library's generic matcher, which took about 1 % of a simulated day's CPU
    /// for a few path templates filled once a flow.
    func filling(_ placeholder: String, with value: String) -> String {
        var path = self
        return path.withUTF8 { template in
            var placeholder = placeholder
            return placeholder.withUTF8 { marker in
                guard !marker.isEmpty, marker.count <= template.count else { return self }
                var filled: [UInt8] = []
                var copied = 0
                var index = 0
                let last = template.count - marker.count
                while index <= last {
                    if UnsafeBufferPointer(rebasing: template[index..<index + marker.count]).hasSameBytes(as: marker) {
                        if filled.capacity == 0 { filled.reserveCapacity(template.count + value.utf8.count) }
                        filled.append(contentsOf: template[copied..<index])
                        filled.append(contentsOf: value.utf8)
                        index += marker.count
                        copied = index
                    } else {
                        index += 1
                    }
                }
                guard copied > 0 else { return self }
                filled.append(contentsOf: template[copied...])
                return String(decoding: filled, as: UTF8.self)
            }
        }
    }
}
