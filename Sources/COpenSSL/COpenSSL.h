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
#include <openssl/pem.h>
#include <openssl/bio.h>

#endif
