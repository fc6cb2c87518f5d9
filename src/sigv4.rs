//! AWS Signature Version 4: the `authorization` header AWS services (Amazon Bedrock among them)
//! take, computed from the request, the credentials and the time.
//!
//! A pure function of its inputs, like the rest of the core: the wall clock comes in as
//! milliseconds since the Unix epoch (the driver reads `Date.now()` for each attempt, since a
//! signature is valid for 5 minutes around its `x-amz-date`), and headers go out. The algorithm is
//! AWS's "Create a signed AWS API request" (IAM user guide): a canonical request, its SHA-256 in a
//! string to sign, and an HMAC-SHA256 chain from the secret key through the date, region and
//! service. SHA-256 and HMAC are written here (FIPS 180-4, RFC 2104) rather than taken from a
//! crate: about 60 lines, cheaper in the wasm than the RustCrypto crates, and checked below
//! against NIST's and RFC 4231's vectors and AWS's published SigV4 test suite, and end to end
//! against `@smithy/signature-v4` (tests/e2e/bedrock.test.mjs).

use std::fmt;

use crate::secret::{Secret, REDACTED};

/// An AWS access key: its id, its secret, and the session token of temporary credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct AwsCredentials {
    pub access_key_id: Secret,
    pub secret_access_key: Secret,
    pub session_token: Option<Secret>,
}

impl fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AwsCredentials({REDACTED})")
    }
}

/// A request to sign. `headers` are the ones to sign besides `host` (read from the URL) and the
/// `x-amz-date` and `x-amz-security-token` this adds: names in lower case.
pub struct Unsigned<'a> {
    pub method: &'a str,
    pub url: &'a str,
    pub headers: &'a [(String, String)],
    pub body: &'a [u8],
}

/// The headers that sign `request` for `service` in `region` at `now_epoch_ms`: `x-amz-date`,
/// `x-amz-security-token` for temporary credentials, and `authorization`.
pub fn sign(
    request: &Unsigned,
    credentials: &AwsCredentials,
    region: &str,
    service: &str,
    now_epoch_ms: u64,
) -> Vec<(String, String)> {
    let amz_date = amz_date(now_epoch_ms);
    let date = &amz_date[..8];
    let (authority, path, query) = split_url(request.url);
    let mut headers: Vec<(String, String)> =
        vec![("host".into(), authority.into()), ("x-amz-date".into(), amz_date.clone())];
    let token = credentials.session_token.as_ref().map(|t| t.expose().to_string());
    headers.extend(token.clone().map(|t| ("x-amz-security-token".to_string(), t)));
    headers.extend(request.headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), canonical_value(v))));
    sort(&mut headers);
    let names: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
    let signed_headers = names.join(";");
    let mut canonical = format!("{}\n{}\n{}\n", request.method, canonical_path(path), canonical_query(query));
    for (name, value) in &headers {
        canonical.push_str(&format!("{name}:{value}\n"));
    }
    canonical.push_str(&format!("\n{signed_headers}\n{}", hex(&sha256(request.body))));
    let scope = format!("{date}/{region}/{service}/aws4_request");
    let to_sign = format!("AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}", hex(&sha256(canonical.as_bytes())));
    let mut key = hmac(format!("AWS4{}", credentials.secret_access_key.expose()).as_bytes(), date.as_bytes());
    for part in [region, service, "aws4_request"] {
        key = hmac(&key, part.as_bytes());
    }
    let signature = hex(&hmac(&key, to_sign.as_bytes()));
    let authorization = format!(
        "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed_headers}, Signature={signature}",
        credentials.access_key_id.expose()
    );
    let mut out = vec![("x-amz-date".to_string(), amz_date)];
    out.extend(token.map(|t| ("x-amz-security-token".to_string(), t)));
    out.push(("authorization".into(), authorization));
    out
}

/// `YYYYMMDD'T'HHMMSS'Z'` in UTC.
fn amz_date(epoch_ms: u64) -> String {
    let secs = epoch_ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil_from_days, for days since 1970-01-01 (never negative here).
    let z = days + 719_468;
    let (era, doe) = (z / 146_097, z % 146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!("{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

/// The URL's authority without a default port (what fetch sends as `host`), its path and query.
fn split_url(url: &str) -> (&str, &str, &str) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("https", url));
    let rest = rest.split('#').next().unwrap_or("");
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = rest.find('/').map_or((rest, "/"), |i| (&rest[..i], &rest[i..]));
    let default_port = if scheme.eq_ignore_ascii_case("http") { ":80" } else { ":443" };
    (authority.strip_suffix(default_port).unwrap_or(authority), path, query)
}

/// A header value with its ends trimmed of spaces and each run of spaces made one (the values
/// signed here are checked header values: no tabs or line breaks).
fn canonical_value(value: &str) -> String {
    value.split(' ').filter(|word| !word.is_empty()).collect::<Vec<_>>().join(" ")
}

/// The path normalized (no empty, `.` or `..` segments) and each segment URI-encoded once more,
/// as every service but S3 wants: a `%3A` in the URL is signed as `%253A`.
fn canonical_path(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    let mut out = String::from("/");
    out.push_str(&segments.iter().map(|s| uri_encode(s)).collect::<Vec<_>>().join("/"));
    if path.ends_with('/') && !segments.is_empty() {
        out.push('/');
    }
    out
}

/// The query's parameters sorted, each kept as the URL writes it (Bedrock's URLs have none).
fn canonical_query(query: &str) -> String {
    let mut params: Vec<(&str, &str)> =
        query.split('&').filter(|p| !p.is_empty()).map(|p| p.split_once('=').unwrap_or((p, ""))).collect();
    sort(&mut params);
    params.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&")
}

/// Every byte but the unreserved `A-Za-z0-9-._~` as `%XX`.
pub fn uri_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(2 * bytes.len());
    for b in bytes {
        out.extend([b >> 4, b & 15].map(|n| char::from(b"0123456789abcdef"[usize::from(n)])));
    }
    out
}

/// Sorts a few items in place, by insertion: far smaller in the wasm than the standard library's
/// sorts, each of which is its own copy of a general algorithm per element type.
fn sort<T: Ord>(items: &mut [T]) {
    for i in 1..items.len() {
        let mut at = i;
        while at > 0 && items[at - 1] > items[at] {
            items.swap(at - 1, at);
            at -= 1;
        }
    }
}

/// SHA-256 (FIPS 180-4).
fn sha256(message: &[u8]) -> [u8; 32] {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
        0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
        0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
        0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
        0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
        0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
        0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] =
        [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    let mut padded = message.to_vec();
    padded.push(0x80);
    while padded.len() % 64 != 56 {
        padded.push(0);
    }
    padded.extend_from_slice(&((message.len() as u64) * 8).to_be_bytes());
    for block in padded.chunks_exact(64) {
        let mut w = [0u32; 64];
        for i in 0..64 {
            w[i] = if i < 16 {
                u32::from_be_bytes([block[4 * i], block[4 * i + 1], block[4 * i + 2], block[4 * i + 3]])
            } else {
                let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
                let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
                w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1)
            };
        }
        let mut v = h;
        for i in 0..64 {
            let [a, b, c, d, e, f, g, hh] = v;
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh.wrapping_add(s1).wrapping_add(ch).wrapping_add(K[i]).wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            v = [t1.wrapping_add(s0).wrapping_add(maj), a, b, c, d.wrapping_add(t1), e, f, g];
        }
        for (x, y) in h.iter_mut().zip(v) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 32];
    for (chunk, word) in out.chunks_exact_mut(4).zip(h) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    out
}

/// HMAC-SHA256 (RFC 2104).
fn hmac(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&sha256(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.iter().map(|b| b ^ byte).collect::<Vec<u8>>();
    let mut inner = pad(0x36);
    inner.extend_from_slice(message);
    let mut outer = pad(0x5c);
    outer.extend_from_slice(&sha256(&inner));
    sha256(&outer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_matches_fips_180_examples() {
        assert_eq!(hex(&sha256(b"")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(hex(&sha256(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(
            hex(&sha256(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            hex(&sha256(&vec![b'a'; 1_000_000])),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }

    /// RFC 4231 test cases 1, 2 and 6 (a key longer than a block).
    #[test]
    fn hmac_matches_rfc_4231() {
        assert_eq!(
            hex(&hmac(&[0x0b; 20], b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hex(&hmac(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            hex(&hmac(&[0xaa; 131], b"Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn dates_are_utc() {
        assert_eq!(amz_date(1_440_938_160_000), "20150830T123600Z");
        assert_eq!(amz_date(0), "19700101T000000Z");
        assert_eq!(amz_date(951_782_400_000), "20000229T000000Z");
        assert_eq!(amz_date(4_102_444_799_999), "20991231T235959Z");
    }

    /// AWS's SigV4 test suite (docs.aws.amazon.com/general/latest/gr/signature-v4-test-suite.html,
    /// also github.com/awslabs/aws-c-auth `tests/aws-signing-test-suite/v4`): its credentials,
    /// region, service and time, and the signatures its `.authz` files publish.
    #[test]
    fn aws_test_suite() {
        let credentials = AwsCredentials {
            access_key_id: Secret::new("AKIDEXAMPLE"),
            secret_access_key: Secret::new("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
            session_token: None,
        };
        /// A case: its name, method, path, headers besides host and x-amz-date, body, and the
        /// signed headers and signature its `.authz` file publishes.
        struct Case(
            &'static str,
            &'static str,
            &'static str,
            &'static [(&'static str, &'static str)],
            &'static str,
            &'static str,
            &'static str,
        );
        const VANILLA: &str = "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31";
        let cases = [
            Case("get-vanilla", "GET", "/", &[], "", "host;x-amz-date", VANILLA),
            Case(
                "post-vanilla",
                "POST",
                "/",
                &[],
                "",
                "host;x-amz-date",
                "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
            ),
            Case(
                "get-vanilla-query-order-key-case",
                "GET",
                "/?Param2=value2&Param1=value1",
                &[],
                "",
                "host;x-amz-date",
                "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
            ),
            Case(
                "post-x-www-form-urlencoded",
                "POST",
                "/",
                &[("Content-Type", "application/x-www-form-urlencoded")],
                "Param1=value1",
                "content-type;host;x-amz-date",
                "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a",
            ),
            Case(
                "post-header-key-sort",
                "POST",
                "/",
                &[("My-Header1", "value1")],
                "",
                "host;my-header1;x-amz-date",
                "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c",
            ),
            Case(
                "post-header-value-case",
                "POST",
                "/",
                &[("My-Header1", "VALUE1")],
                "",
                "host;my-header1;x-amz-date",
                "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d",
            ),
            Case(
                "get-header-value-trim",
                "GET",
                "/",
                &[("My-Header1", " value1"), ("My-Header2", " \"a   b   c\"")],
                "",
                "host;my-header1;my-header2;x-amz-date",
                "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736",
            ),
            Case("get-slash-dot-slash", "GET", "/./", &[], "", "host;x-amz-date", VANILLA),
            Case("get-relative-relative", "GET", "/example1/example2/../..", &[], "", "host;x-amz-date", VANILLA),
        ];
        for Case(name, method, path, headers, body, signed, signature) in cases {
            let url = format!("https://example.amazonaws.com{path}");
            let headers: Vec<(String, String)> =
                headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.to_string())).collect();
            let request = Unsigned { method, url: &url, headers: &headers, body: body.as_bytes() };
            let out = sign(&request, &credentials, "us-east-1", "service", 1_440_938_160_000);
            let expected = format!(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
                 SignedHeaders={signed}, Signature={signature}"
            );
            assert_eq!(out.last().map(|(_, v)| v.as_str()), Some(expected.as_str()), "{name}");
            assert_eq!(out[0], ("x-amz-date".into(), "20150830T123600Z".into()), "{name}");
        }
    }

    /// The suite's `post-sts-header-before`: a session token is sent and signed.
    #[test]
    fn a_session_token_is_sent_and_signed() {
        let token = "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==";
        let credentials = AwsCredentials {
            access_key_id: Secret::new("AKIDEXAMPLE"),
            secret_access_key: Secret::new("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
            session_token: Some(Secret::new(token)),
        };
        let request = Unsigned { method: "POST", url: "https://example.amazonaws.com/", headers: &[], body: b"" };
        let out = sign(&request, &credentials, "us-east-1", "service", 1_440_938_160_000);
        assert_eq!(out[1], ("x-amz-security-token".into(), token.into()));
        assert!(out[2].1.ends_with(
            "SignedHeaders=host;x-amz-date;x-amz-security-token, \
             Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"
        ));
        assert_eq!(format!("{credentials:?}"), "AwsCredentials(<redacted>)");
    }

    #[test]
    fn paths_are_encoded_twice_and_hosts_lose_default_ports() {
        assert_eq!(
            canonical_path("/model/anthropic.claude-v2%3A1/converse"),
            "/model/anthropic.claude-v2%253A1/converse"
        );
        assert_eq!(canonical_path("/"), "/");
        assert_eq!(
            split_url("https://bedrock-runtime.us-east-1.amazonaws.com:443/model/m/converse").0,
            "bedrock-runtime.us-east-1.amazonaws.com"
        );
        assert_eq!(split_url("http://127.0.0.1:8080/x?a=b").0, "127.0.0.1:8080");
        assert_eq!(split_url("http://127.0.0.1:8080").1, "/");
    }
}
