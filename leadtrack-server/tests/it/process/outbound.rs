//! The command line checks every address it saves by the operator's rule for outbound
//! addresses, with the exceptions given as flags, in the environment or in the file.

use crate::process::binary::test_key;
use crate::process::operations::server_with_env;

#[tokio::test]
async fn the_command_line_checks_every_address_it_saves_by_the_operators_rule() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leadtrack.db");
    let db = db.to_str().unwrap();
    let (name, key) = test_key();
    let run = async |args: &[&str], env: &[(&str, &str)]| {
        let env = [&[(name, key.as_str())][..], env].concat();
        server_with_env(&[args, &["--db", db]].concat(), &env).await
    };
    let (code, _, err) = run(
        &["project", "create", "--name", "Acme", "--id", "acme"],
        &[],
    )
    .await;
    assert_eq!(code, 0, "{err}");

    let hook = [
        "webhook",
        "add",
        "--project",
        "acme",
        "--events",
        "lead.created",
        "--url",
    ];
    let private_hook = [&hook[..], &["https://[fd00::1]/hook"]].concat();
    let refused: [(&[&str], &str); 5] = [
        (
            &[
                "integration",
                "ga4",
                "--project",
                "acme",
                "--measurement-id",
                "G-1",
                "--api-secret",
                "s3cret",
                "--base-url",
                "gopher://example.com/",
            ],
            "gopher: addresses are not called",
        ),
        (
            &[
                "integration",
                "webhook",
                "--project",
                "acme",
                "--url",
                "http://localhost.evil.invalid/hook",
            ],
            "http:// would send in clear text",
        ),
        (
            &[
                "integration",
                "webhook",
                "--project",
                "acme",
                "--url",
                "https://api.localhost/hook",
            ],
            "the address is loopback (api.localhost); the server's operator can allow it",
        ),
        (&private_hook, "the address is private (fd00::1)"),
        (
            &[
                "integration",
                "meta-lead-ads",
                "--project",
                "acme",
                "--page-id",
                "1",
                "--page-access-token",
                "t",
                "--base-url",
                "https://169.254.169.254/",
            ],
            "the address is link-local (169.254.169.254)",
        ),
    ];
    for (args, why) in refused {
        let (code, out, err) = run(args, &[]).await;
        assert_ne!(code, 0, "{args:?}: {out}");
        assert!(err.contains(why), "{args:?}: {err}");
    }
    let (_, listed, _) = run(&["integration", "list", "--project", "acme"], &[]).await;
    let saved = listed
        .lines()
        .filter(|line| !line.ends_with("not connected"));
    assert_eq!(saved.count(), 0, "nothing was saved: {listed}");

    // The operator's exceptions, as flags and in the environment.
    let flags = ["--allow-targets", "10.1.2.0/24", "--allow-http-targets"];
    let (code, _, err) = run(
        &[&flags[..], &hook, &["http://10.1.2.3/hook"]].concat(),
        &[],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let env = [
        ("LEADTRACK_ALLOW_TARGETS", "private"),
        ("LEADTRACK_ALLOW_HTTP_TARGETS", "true"),
    ];
    let (code, _, err) = run(&[&hook[..], &["http://192.168.1.9/hook"]].concat(), &env).await;
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(&[&hook[..], &["http://10.1.3.3/hook"]].concat(), &[]).await;
    assert_ne!(code, 0);
    assert!(err.contains("http:// would send in clear text"), "{err}");
    let (_, listed, _) = run(&["webhook", "list", "--project", "acme"], &[]).await;
    assert!(
        listed.contains("http://10.1.2.3/hook") && listed.contains("http://192.168.1.9/hook"),
        "{listed}"
    );

    // A list the rule cannot read stops the command, naming the flag.
    let (code, _, err) = run(&["--allow-targets", "10.0.0.0/33", "project", "list"], &[]).await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--allow-targets") && err.contains("10.0.0.0/33"),
        "{err}"
    );
}
