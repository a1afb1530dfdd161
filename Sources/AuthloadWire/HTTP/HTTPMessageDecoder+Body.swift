extension HTTPMessageDecoder {
    /// Ends the head and starts reading a body framed as `framing`.
    mutating func beginBody(_ framing: Framing) {
        finishFields()
        switch framing {
        case .none:
            bodyState = .length(remaining: 0)
        case .length(let length):
            // Reserve what is likely to arrive soon, not what a hostile header claims.
            body.reserveCapacity(min(length, 1 << 16))
            bodyState = .length(remaining: length)
        case .chunked:
            bodyState = .chunkSize
        case .untilClose:
            bodyState = .untilClose
        }
    }

    /// Moves body bytes out of the buffer; true once the body is complete.
    ///
    /// - Throws: ``HTTPParseError`` for bad chunk framing, an oversized body, or a stream that ended early.
    mutating func readBody() throws(HTTPParseError) -> Bool {
        while true {
            switch bodyState {
            case .length(let remaining):
                let count = min(remaining, unreadCount)
                takeBody(count)
                if count == remaining { return true }
                bodyState = .length(remaining: remaining - count)
                return try waitForMore("expected \(remaining - count) more body bytes", insideContentLength: true)

            case .chunkSize:
                guard let line = try takeChunkSizeLine() else { return try waitForMore("expected a chunk size") }
                let size = try chunkSize(line)
                if size == 0 {
                    beginTrailers()
                    bodyState = .trailers
                } else {
                    guard size <= maxBodyBytes - body.count else {
                        throw .bodyTooLarge(limit: maxBodyBytes, at: offset(line.lowerBound))
                    }
                    bodyState = .chunkData(remaining: size)
                }

            case .chunkData(let remaining):
                let count = min(remaining, unreadCount)
                takeBody(count)
                guard count == remaining else {
                    bodyState = .chunkData(remaining: remaining - count)
                    return try waitForMore("expected \(remaining - count) more chunk bytes")
                }
                bodyState = .chunkEnd

            case .chunkEnd:
                guard try takeChunkTerminator() else { return try waitForMore("expected CRLF after chunk data") }
                bodyState = .chunkSize

            case .trailers:
                guard let line = try takeSectionLine(section: "trailer section") else {
                    return try waitForMore("expected the end of the trailer section")
                }
                if line.isEmpty { return true }
                try parseField(line, isTrailer: true)

            case .untilClose:
                let room = maxBodyBytes - body.count
                guard unreadCount <= room else { throw .bodyTooLarge(limit: maxBodyBytes, at: offset(readIndex + room)) }
                takeBody(unreadCount)
                return isAtEndOfStream
            }
        }
    }

    /// Not complete yet: fine while the stream is open, an error once it has ended.
    private func waitForMore(_ expectation: String, insideContentLength: Bool = false) throws(HTTPParseError) -> Bool {
        if isAtEndOfStream { throw truncated(expectation, insideContentLength: insideContentLength) }
        return false
    }

    private mutating func takeBody(_ count: Int) {
        guard count > 0 else { return }
        body.append(contentsOf: buffer[readIndex..<readIndex + count])
        skip(count)
    }

    private mutating func takeChunkSizeLine() throws(HTTPParseError) -> Range<Int>? {
        let limit = Self.maxChunkLineBytes
        return try takeLine(allowance: limit) { at throws(HTTPParseError) in
            throw .chunkSize(at: at, "chunk size line longer than \(limit) bytes")
        }?.0
    }

    /// Parses `1*HEXDIG [ BWS ";" extensions ]`; extensions are checked for control bytes and ignored.
    private func chunkSize(_ line: Range<Int>) throws(HTTPParseError) -> Int {
        var index = line.lowerBound
        var size = 0
        var significantDigits = 0
        while index < line.upperBound, let digit = ASCII.hexValue(buffer[index]) {
            if size > 0 || digit > 0 { significantDigits += 1 }
            // 15 hex digits is 2^60, far above any body limit, and cannot overflow Int.
            guard significantDigits <= 15 else { throw .chunkSize(at: offset(line.lowerBound), "chunk size too large") }
            size = size << 4 | Int(digit)
            index += 1
        }
        guard index > line.lowerBound else {
            throw .chunkSize(at: offset(line.lowerBound), "\(HTTPParseError.quoted(buffer[line])) is not hexadecimal")
        }
        while index < line.upperBound, ASCII.isWhitespace(buffer[index]) { index += 1 }
        guard index == line.upperBound || buffer[index] == ASCII.semicolon else {
            throw .chunkSize(at: offset(index), "unexpected character after the chunk size")
        }
        for position in index..<line.upperBound where !ASCII.isFieldValueChar(buffer[position]) {
            throw .chunkSize(at: offset(position), "invalid character in chunk extension")
        }
        return size
    }

    /// Consumes the CRLF (or bare LF) after chunk data; false until it has arrived.
    private mutating func takeChunkTerminator() throws(HTTPParseError) -> Bool {
        guard unreadCount > 0 else { return false }
        switch buffer[readIndex] {
        case ASCII.lf:
            skip(1)
            return true
        case ASCII.cr:
            guard unreadCount > 1 else { return false }
            guard buffer[readIndex + 1] == ASCII.lf else {
                throw .chunk(at: offset(readIndex + 1), "expected LF after CR at the end of chunk data")
            }
            skip(2)
            return true
        default:
            throw .chunk(at: offset(readIndex), "expected CRLF after chunk data")
        }
    }
}
