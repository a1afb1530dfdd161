// The system OpenSSL (libssl, libcrypto) as one Swift module: hashing, HMAC, randomness,
// ECDSA and X.509 for PKCE, tokens and TLS. Headers only; the library comes from the OS.
#ifndef AUTHLOAD_COPENSSL_H
#define AUTHLOAD_COPENSSL_H

#include <openssl/sha.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/bn.h>

// Swift cannot call OpenSSL's function-like macros; these wrap the few the transport needs.

/// Names the server a client wants (SNI); `SSL_set_tlsext_host_name` is a macro.
static inline int authload_ssl_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, (void *)name);
}

/// Settings every authload context shares, all macros: TLS 1.2 or later; writes that return after
/// each record and may resume from a buffer that moved (Swift arrays move); buffers released while
/// a connection idles (thousands of idle users); no renegotiation; and a peer that closes without
/// close_notify read as a plain end of stream, as HTTP/1.1 servers commonly do.
static inline int authload_ssl_ctx_configure(SSL_CTX *ctx) {
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return 0;
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
    uint64_t options = SSL_OP_NO_RENEGOTIATION;
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
    options |= SSL_OP_IGNORE_UNEXPECTED_EOF;
#endif
    SSL_CTX_set_options(ctx, options);
    return 1;
}

/// Picks the curve of an EC key generation (a macro before OpenSSL 3).
static inline int authload_evp_pkey_ctx_set_ec_curve(EVP_PKEY_CTX *ctx, int nid) {
    return EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, nid);
}

/// Adds an intermediate to the chain a context sends with its certificate (a copy: the caller keeps
/// its own); `SSL_CTX_add1_chain_cert` is a macro.
static inline int authload_ssl_ctx_add1_chain_cert(SSL_CTX *ctx, X509 *certificate) {
    return (int)SSL_CTX_ctrl(ctx, SSL_CTRL_CHAIN_CERT, 1, (void *)certificate);
}

/// A PEM passphrase callback that gives none: an encrypted key then fails to load instead of OpenSSL's
/// default asking for a passphrase on the terminal in the middle of a run.
static inline int authload_no_passphrase(char *buffer, int size, int rwflag, void *userdata) {
    (void)buffer; (void)size; (void)rwflag; (void)userdata;
    return -1;
}

/// A server's ALPN choice (RFC 7301): h2 when the client offers it, else http/1.1, else no protocol named (the
/// connection then speaks HTTP/1.1, as it would to a client that offers no ALPN at all).
static inline int authload_alpn_select_h2(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                          const unsigned char *in, unsigned int inlen, void *arg) {
    static const unsigned char preferred[] = "\x02h2\x08http/1.1";
    (void)ssl; (void)arg;
    unsigned char *selected = NULL;
    if (SSL_select_next_proto(&selected, outlen, preferred, sizeof(preferred) - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_NOACK;
    }
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

/// Makes a server context choose h2 or http/1.1 by ALPN (a C callback: Swift closures cannot be one without a context).
static inline void authload_ssl_ctx_select_h2(SSL_CTX *ctx) {
    SSL_CTX_set_alpn_select_cb(ctx, authload_alpn_select_h2, NULL);
}

#endif
