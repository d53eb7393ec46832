use super::*;

fn strict(text: &str) -> Result<String, Refusal> {
    Targets::default().check(text).map(String::from)
}

fn refused_as(text: &str) -> (&'static str, String) {
    match strict(text) {
        Err(Refusal::Special { kind, host }) => (kind, host),
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn public_https_addresses_pass_in_the_url_standards_form() {
    assert_eq!(
        strict(" HTTPS://Hooks.Slack.com/services/T/B/x ").unwrap(),
        "https://hooks.slack.com/services/T/B/x"
    );
    assert_eq!(strict("https://8.8.8.8").unwrap(), "https://8.8.8.8/");
    assert_eq!(
        strict("https://[2606:4700::1111]:8443/x").unwrap(),
        "https://[2606:4700::1111]:8443/x"
    );
    // An IDN host is kept in its ASCII form.
    assert_eq!(
        strict("https://bücher.example/hook").unwrap(),
        "https://xn--bcher-kva.example/hook"
    );
    assert_eq!(
        strict("https://example.com./x").unwrap(),
        "https://example.com./x"
    );
}

#[test]
fn schemes_other_than_https_are_refused_whatever_their_case() {
    for text in [
        "file:///etc/passwd",
        "gopher://example.com/",
        "ftp://example.com/",
        "dict://example.com:11211/",
        "javascript:alert(1)",
        "data:text/plain,hi",
    ] {
        let refusal = strict(text).unwrap_err();
        assert!(
            matches!(refusal, Refusal::Scheme(_) | Refusal::NotAnAddress),
            "{text}: {refusal:?}"
        );
    }
    assert_eq!(
        strict("FILE:///etc/passwd").unwrap_err().to_string(),
        "file: addresses are not called; give an https:// address"
    );
    assert_eq!(strict("HTTP://example.com/").unwrap_err(), Refusal::Http);
    let http = Targets::new("", true).unwrap();
    assert_eq!(
        http.check("HTTP://Example.com/x").unwrap().as_str(),
        "http://example.com/x"
    );
}

#[test]
fn what_is_not_an_address_is_refused() {
    for text in [
        "",
        "   ",
        "https://",
        "https:///",
        "example.com/hook",
        "https://a b.example/",
        "https://./",
    ] {
        assert_eq!(strict(text).unwrap_err(), Refusal::NotAnAddress, "{text:?}");
    }
    let long = format!("https://example.com/{}", "a".repeat(2000));
    assert_eq!(strict(&long).unwrap_err(), Refusal::NotAnAddress);
}

#[test]
fn user_info_is_refused() {
    for text in [
        "https://127.0.0.1@evil.example/hook",
        "https://user:pass@example.com/",
        "https://:pass@example.com/",
    ] {
        assert_eq!(strict(text).unwrap_err(), Refusal::UserInfo, "{text}");
    }
}

#[test]
fn every_special_range_is_refused_with_its_name() {
    let cases = [
        ("https://0.0.0.0/", "unspecified"),
        ("https://10.0.0.1/", "private"),
        ("https://100.64.0.1/", "shared (carrier-grade NAT)"),
        ("https://127.0.0.1/", "loopback"),
        ("https://127.255.1.2/", "loopback"),
        ("https://169.254.169.254/latest/meta-data/", "link-local"),
        ("https://172.16.0.1/", "private"),
        ("https://172.31.255.255/", "private"),
        ("https://192.0.0.8/", "reserved"),
        ("https://192.0.2.1/", "documentation"),
        ("https://192.168.1.1/", "private"),
        ("https://198.18.0.1/", "reserved"),
        ("https://198.51.100.1/", "documentation"),
        ("https://203.0.113.9/", "documentation"),
        ("https://224.0.0.1/", "multicast"),
        ("https://255.255.255.255/", "reserved"),
        ("https://[::]/", "unspecified"),
        ("https://[::1]/", "loopback"),
        ("https://[::7f00:1]/", "reserved"),
        ("https://[100::1]/", "reserved"),
        ("https://[2001:db8::1]/", "documentation"),
        ("https://[fd00::1]/", "private"),
        ("https://[fe80::1]/", "link-local"),
        ("https://[fec0::1]/", "private"),
        ("https://[ff02::1]/", "multicast"),
        ("https://[64:ff9b:1::1]/", "private"),
    ];
    for (text, kind) in cases {
        assert_eq!(refused_as(text).0, kind, "{text}");
    }
    // The edges of a range are exact.
    for text in [
        "https://172.32.0.1/",
        "https://100.128.0.1/",
        "https://11.0.0.1/",
    ] {
        assert!(strict(text).is_ok(), "{text}");
    }
}

#[test]
fn other_spellings_of_an_address_are_read_as_the_address() {
    let cases = [
        ("http://2130706433/", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://127.0.0.1./", "127.0.0.1"),
        ("http://[::ffff:127.0.0.1]/", "127.0.0.1"),
        ("http://[::ffff:a9fe:a9fe]/", "169.254.169.254"),
        ("http://[64:ff9b::a00:1]/", "64:ff9b::a00:1"),
        ("http://[2002:c0a8:101::1]/", "2002:c0a8:101::1"),
    ];
    let http = Targets::new("", true).unwrap();
    for (text, host) in cases {
        match http.check(text) {
            Err(Refusal::Special { host: got, .. }) => assert_eq!(got, host, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    // A NAT64 or 6to4 address of a public IPv4 address is public.
    assert!(strict("https://[64:ff9b::808:808]/").is_ok());
}

#[test]
fn localhost_by_name_is_loopback_however_written() {
    for text in [
        "https://localhost/",
        "https://LOCALHOST./",
        "https://api.localhost:8080/",
        "https://ｌｏｃａｌｈｏｓｔ/",
    ] {
        assert_eq!(refused_as(text).0, "loopback", "{text}");
    }
    // Names that only begin like one are names of the internet, resolved when called.
    for text in [
        "https://localhost.evil.invalid/hook",
        "https://127.0.0.1.evil.invalid/hook",
    ] {
        assert!(strict(text).is_ok(), "{text}");
    }
}

#[test]
fn a_refusal_says_why_in_words() {
    assert_eq!(
        strict("https://10.0.0.1/hook").unwrap_err().to_string(),
        "the address is private (10.0.0.1); the server's operator can allow it"
    );
    assert_eq!(
        strict("http://example.com/").unwrap_err().to_string(),
        "http:// would send in clear text; give an https:// address (the server's operator can allow http://)"
    );
}

#[test]
fn the_operator_allows_ranges_and_private() {
    let loopback = Targets::new(" 127.0.0.0/8 , ::1 ", false).unwrap();
    assert!(loopback.check("https://127.0.0.2:9/x").is_ok());
    assert!(loopback.check("https://[::1]/").is_ok());
    assert!(loopback.check("https://[::ffff:127.0.0.1]/").is_ok());
    assert!(loopback.check("https://localhost/").is_ok());
    assert_eq!(refused_as("https://10.0.0.1/").0, "private");
    assert!(loopback.check("https://10.0.0.1/").is_err());
    let one = Targets::new("10.1.2.0/24", false).unwrap();
    assert!(one.check("https://10.1.2.200/").is_ok());
    assert!(one.check("https://10.1.3.1/").is_err());
    let private = Targets::new("PRIVATE", false).unwrap();
    for text in [
        "https://169.254.169.254/",
        "https://[fd00::1]/",
        "https://localhost/",
    ] {
        assert!(private.check(text).is_ok(), "{text}");
    }
    assert_eq!(private.check("http://example.com/"), Err(Refusal::Http));
    assert_eq!(
        Targets::new("10.0.0.0/33", false).unwrap_err(),
        "\"10.0.0.0/33\" is neither a range such as 10.1.2.0/24, an address, nor `private`"
    );
    assert!(Targets::new("intranet", false).is_err());
    assert_eq!(Targets::new(" , ", false).unwrap(), Targets::default());
}

#[test]
fn resolved_addresses_are_checked_alike() {
    let strict = Targets::default();
    assert!(strict.check_ip("93.184.215.14".parse().unwrap()).is_ok());
    assert_eq!(
        strict.check_ip("::ffff:10.0.0.1".parse().unwrap()),
        Err(Refusal::Special {
            kind: "private",
            host: "10.0.0.1".to_owned()
        })
    );
    assert!(
        Targets::any()
            .check_ip("127.0.0.1".parse().unwrap())
            .is_ok()
    );
}
