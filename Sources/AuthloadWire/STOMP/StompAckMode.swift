/// How a subscription acknowledges the messages it receives, as sent in SUBSCRIBE's `ack` header.
public enum StompAckMode: String, Sendable, Hashable, CaseIterable {
    /// The server counts a message as acknowledged once it is sent; the STOMP default.
    case auto = "auto"
    /// An ACK acknowledges the named message and every earlier one on the subscription.
    case client = "client"
    /// An ACK acknowledges only the named message.
    case clientIndividual = "client-individual"
}
