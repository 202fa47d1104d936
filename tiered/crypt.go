package tiered

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rsa"
	"crypto/sha3"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// KeyRing holds the RSA private keys the Aiven plugin wrapped data keys
// with, by key pair id (encryption.key.pairs; RsaEncryptionProvider's
// keyring). klog needs only the private halves: it unwraps, never wraps.
type KeyRing map[string]*rsa.PrivateKey

// ErrDecrypt marks a chunk, an index or a data key that does not decrypt:
// a wrong key, or bytes changed after they were encrypted (AES-GCM's tag
// fails).
var ErrDecrypt = errors.New("decryption failed")

type decryptError struct{ msg string }

func (e *decryptError) Error() string { return e.msg }
func (e *decryptError) Unwrap() error { return ErrDecrypt }

// ReadPrivateKey reads a key pair's private key file as the plugin does
// (RsaKeyReader: the first PEM object, a PKCS#8 private key, as
// `openssl genpkey` writes). A PKCS#1 "RSA PRIVATE KEY" is read too, though
// the plugin would refuse it.
func ReadPrivateKey(path string) (*rsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParsePrivateKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ParsePrivateKeyPEM reads the first PEM object of data as an RSA private
// key (PKCS#8, or PKCS#1).
func ParsePrivateKeyPEM(data []byte) (*rsa.PrivateKey, error) {
	blk, _ := pem.Decode(data)
	if blk == nil {
		return nil, errors.New("no PEM object (the plugin reads a PEM file: -----BEGIN PRIVATE KEY-----)")
	}
	if k, err := x509.ParsePKCS8PrivateKey(blk.Bytes); err == nil {
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, errors.New("the PKCS#8 key is not an RSA key")
		}
		return rk, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(blk.Bytes); err == nil {
		return k, nil
	}
	return nil, errors.New("the PEM object (" + blk.Type + ") is not an RSA private key in PKCS#8 (or PKCS#1)")
}

// IDs lists the key pair ids, sorted.
func (kr KeyRing) IDs() []string {
	ids := make([]string, 0, len(kr))
	for id := range kr {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// dataKey unwraps a manifest's data key: RSA-OAEP with SHA3-512 for both
// the label hash and MGF1 (BouncyCastle's
// RSA/NONE/OAEPWithSHA3-512AndMGF1Padding, RsaEncryptionProvider), giving
// the AES-256 key.
func (kr KeyRing) dataKey(enc *ManifestEncryption) (cipher.AEAD, error) {
	id, wrapped, err := splitDataKey(enc.DataKey)
	if err != nil {
		return nil, err
	}
	priv := kr[id]
	if priv == nil {
		have := "klog was given none"
		if len(kr) > 0 {
			have = "klog has " + strings.Join(kr.IDs(), ", ")
		}
		return nil, &decryptError{msg: "the data key is wrapped with key pair " + strconv.Quote(id) + "; " + have + " (--key-pair " + id + "=PRIVATE.pem)"}
	}
	key, err := rsa.DecryptOAEP(sha3.New512(), nil, priv, wrapped, nil)
	if err != nil {
		return nil, &decryptError{msg: "the data key does not unwrap with key pair " + strconv.Quote(id) + " (RSA-OAEP, SHA3-512): a different key, or a changed manifest"}
	}
	if len(key) != 32 {
		return nil, &decryptError{msg: "the data key is " + strconv.Itoa(len(key)) + " bytes; the plugin's AES keys are 256-bit"}
	}
	blk, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(blk) // 12-byte nonce, 16-byte tag: AesEncryptionProvider
}

// ivSize and tagSize are AES/GCM/NoPadding's as the plugin uses it
// (SegmentEncryptionMetadataV1.IV_SIZE, AesEncryptionProvider.GCM_TAG_LENGTH).
const (
	ivSize  = 12
	tagSize = 16
)

// openChunk decrypts one transformed chunk: a 12-byte IV, the ciphertext
// and the 16-byte tag, with the manifest's AAD (DecryptionChunkEnumeration).
// dst receives the plaintext (it may be chunk[ivSize:][:0]).
func openChunk(aead cipher.AEAD, aad, chunk, dst []byte) ([]byte, error) {
	if len(chunk) < ivSize+tagSize {
		return nil, &decryptError{msg: "an encrypted chunk of " + strconv.Itoa(len(chunk)) + " bytes is shorter than its IV and tag (28 bytes)"}
	}
	out, err := aead.Open(dst, chunk[:ivSize], chunk[ivSize:], aad)
	if err != nil {
		return nil, &decryptError{msg: "AES-GCM authentication failed: the bytes were changed after encryption, or the key is not theirs"}
	}
	return out, nil
}
