// Package reqkey is the rule that names a recorded exchange: the key of a
// request is the SHA-256 of the request's canonical encoding. Two requests
// that mean the same thing to the provider get the same key; any change to
// what the provider sees gets another. This comment defines the encoding
// byte by byte (key schema finrepro-key/1); Canonical implements it for
// JSON, Build for requests made from values, and
// "finrepro cache explain REQUEST.json --dir D" prints a key.
//
// # The request object
//
//	{"provider": "openai", "endpoint": "chat/completions", "body": {...}, "sample": 0}
//
// Its fields:
//
//   - provider, a non-empty string: who serves the request (openai,
//     anthropic, sim, ...).
//   - endpoint, a string: the endpoint path relative to the provider's base
//     URL (chat/completions, messages, models/M:generateContent).
//   - body, an object: the whole provider request body: model, every
//     generation parameter, messages, tools, response format, seed ...
//   - sample, an integer from 0 to 2147483647, optional (default 0): the
//     index of repeated draws of the same request.
//
// Any other top-level field is refused. So headers, API keys, timeouts,
// retry settings and base URLs can never reach a key: they do not change
// what the model is asked, and keys must not depend on where or how it was
// asked.
//
// # The endpoint rule
//
// Requests that enter finrepro from a user's file, the lines of
// "finrepro cache load" and the requests files of "finrepro record" and
// "finrepro replay", follow one rule for endpoint (CheckEndpoint), so that
// a request cache load accepts is answered by replay --requests in the
// same form:
//
//   - it is not empty;
//   - it does not start with "/": it is relative to the provider's base
//     URL, which already ends in /v1 (/v1/chat/completions is refused with
//     a hint to write chat/completions);
//   - it holds no "..", no "://", no "?" or "#" (a query string is where
//     keys hide), no backslash, double quote, space, tab, line break or
//     other control character.
//
// The key itself is defined for any string, so the key of an exchange
// stored before this rule is unchanged; only new input is checked.
//
// # Canonical encoding
//
// The encoding is the bytes of
//
//	finrepro-key/1 LF canonical-JSON
//
// that is, the ASCII schema line finrepro-key/1 (Schema), one line feed
// (0x0A), then the request object as canonical JSON, with sample always
// present (0 when absent). The key is the SHA-256 of these bytes, written
// as 64 lower-case hex digits.
//
// The input must be JSON as RFC 8259 defines it, in UTF-8, at most 64 MiB
// (MaxRequestBytes), nested at most 200 deep, with no duplicate object keys
// (after NFC, see below) and nothing but whitespace after the value.
// Canonical JSON is then:
//
//  1. Whitespace: none outside strings.
//  2. Objects: "{", members separated by ",", "}"; a member is its key as
//     a string, ":", its value. Members are sorted by the bytes of their
//     UTF-8 keys (after NFC), ascending.
//  3. Arrays: "[", elements in their order separated by ",", "]".
//  4. Literals: true, false, null.
//  5. Strings (keys and values): the value is decoded (escapes resolved; a
//     \uD8xx\uDCxx pair is one character; a lone surrogate or invalid UTF-8
//     is refused), put in Unicode Normalization Form C, and written between
//     double quotes with only these escapes: \", \\, \b, \f, \n, \r, \t,
//     and \u00xx (lower-case hex) for the other characters below U+0020.
//     Everything else, including "/", "<", ">", "&", U+2028 and all
//     non-ASCII characters, is written as its UTF-8 bytes.
//  6. Numbers are exact decimals (never rounded through binary floating
//     point). Let the value be ±d₁d₂…dₙ × 10^e with no leading or trailing
//     zeros in the digits, and k = n + e (the position of the decimal
//     point). Zero, whatever its spelling or sign, is 0; a minus sign
//     precedes negative values; then, if e ≥ 0 and k ≤ 21: the digits
//     followed by e zeros (1e3 is 1000); else if 0 < k ≤ 21: the first k
//     digits, ".", the rest (1.50 is 1.5); else if -6 < k ≤ 0: "0.", -k
//     zeros, the digits (1e-6 is 0.000001); else: d₁, then "." and d₂…dₙ
//     if n > 1, then "e", the sign + or -, and k - 1 in decimal (1e21 is
//     1e+21, 1e-7 is 1e-7). So 1, 1.0, 10e-1 and 0.1E1 are all 1.
//     Exponents of more than six digits are refused.
//
// The example of Canonical shows a request and its encoding.
//
// # Guarantees (tested)
//
//   - Reordering fields, changing whitespace, other spellings of the same
//     number or string (escapes, NFD) give the same key.
//   - Changing any body field, the provider, the endpoint or sample gives
//     another key.
//   - The canonical form is a fixed point: encoding it again gives the
//     same bytes. A fuzz test checks this and that the output is valid
//     JSON.
//
// # Versioning
//
// Any change to these rules changes the schema line (finrepro-key/2, ...),
// so keys of different schemas never collide; a cache written under one
// schema is read by a finrepro that knows it.
package reqkey
