//! What statements may reach on behalf of whoever sends them: local files, environment
//! variables and network addresses. A person's own CLI reaches everything it can
//! ([`Access::unrestricted`]); a server shared by a team reaches only what its operator
//! allowed ([`Access::confined`]). Every place that reads a file, resolves a `{{ VAR }}`
//! or opens a connection on a statement's behalf asks the session's `Access` first, so
//! the rule lives here once, whoever calls.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// The prefix a confined session's `{{ VAR }}` references must have unless the operator
/// lists the name.
pub const DEFAULT_VARIABLE_PREFIX: &str = "TRIBUTARY_VAR_";

/// Directories no confined session reads, whatever the operator allowed: the kernel's
/// views of processes and devices (`/proc/self/environ` holds the server's tokens).
const NEVER_READ: [&str; 3] = ["/proc", "/sys", "/dev"];

/// Variables that configure Tributary itself, which no statement may read, whatever the
/// allow-list says.
const SERVER_VARIABLES: [&str; 5] = [
    "TRIBUTARY_TOKENS",
    "TRIBUTARY_TOKEN",
    "TRIBUTARY_CATALOG",
    "TRIBUTARY_SERVER",
    "TRIBUTARY_TEST_POSTGRES",
];

/// What a session may reach. Cheap to clone: the rules are shared.
#[derive(Clone, Debug)]
pub struct Access(Arc<Rules>);

#[derive(Debug)]
struct Rules {
    files: Option<FileRule>,
    variables: Option<VariableRule>,
    network: Option<NetworkRule>,
}

#[derive(Debug)]
struct FileRule {
    /// Canonical directories files may be read from.
    roots: Vec<PathBuf>,
    /// Canonical directories never read (the catalog's, `/proc`, ...).
    denied: Vec<PathBuf>,
}

#[derive(Debug)]
struct VariableRule {
    prefix: String,
    names: Vec<String>,
}

#[derive(Debug)]
struct NetworkRule {
    deny_private: bool,
    allow: Vec<HostPattern>,
}

/// An `--allow-hosts` entry: a host name, an address, or a network in CIDR form.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    Name(String),
    Network(IpAddr, u8),
}

/// What an operator allows a confined session, as `tributary serve` takes it.
#[derive(Debug, Clone, Default)]
pub struct Confinement {
    /// Directories file sources may read (`--allow-file-reads`, repeatable).
    pub file_reads: Vec<PathBuf>,
    /// Directories never read, whatever `file_reads` says (the catalog's).
    pub never_read: Vec<PathBuf>,
    /// The prefix of the variables `{{ VAR }}` may name (`--variable-prefix`);
    /// `None` is [`DEFAULT_VARIABLE_PREFIX`].
    pub variable_prefix: Option<String>,
    /// Variables `{{ VAR }}` may name whatever their prefix (`--allow-variables`).
    pub variables: Vec<String>,
    /// Refuse loopback and private addresses too, not only link-local ones
    /// (`--deny-private-networks`).
    pub deny_private_networks: bool,
    /// Hosts, addresses or networks (`10.1.0.0/16`) reached whatever the address rules
    /// say (`--allow-hosts`).
    pub allow_hosts: Vec<String>,
}

/// Why something was refused: what, the rule, and how an operator allows it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {rule}")]
pub struct Refusal {
    /// What was refused: "reading '/etc/passwd'".
    pub what: String,
    /// The rule that refused it.
    pub rule: String,
    /// The sentence that says how it could be allowed.
    pub help: String,
}

/// A configuration an operator gave that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfinementError(String);

impl Refusal {
    /// The refusal as a diagnostic at `span` (code `FORBIDDEN`).
    pub fn diagnostic(&self, span: crate::Span) -> crate::Diagnostic {
        let d = crate::Diagnostic::error(format!("{} is not allowed: {}", self.what, self.rule))
            .with_span(span)
            .with_code(crate::codes::FORBIDDEN);
        if self.help.is_empty() {
            d
        } else {
            d.with_help(self.help.clone())
        }
    }
}

impl Access {
    /// Everything this process can reach: the CLI on a person's own machine.
    pub fn unrestricted() -> Self {
        Self(Arc::new(Rules {
            files: None,
            variables: None,
            network: None,
        }))
    }

    /// Only what `c` allows: a server shared by a team.
    pub fn confined(c: &Confinement) -> Result<Self, ConfinementError> {
        let mut roots = Vec::new();
        for dir in &c.file_reads {
            let canonical = std::fs::canonicalize(dir).map_err(|e| {
                ConfinementError(format!(
                    "--allow-file-reads '{}' cannot be used: {e}",
                    dir.display()
                ))
            })?;
            if !canonical.is_dir() {
                return Err(ConfinementError(format!(
                    "--allow-file-reads '{}' is not a directory",
                    dir.display()
                )));
            }
            roots.push(canonical);
        }
        let mut denied: Vec<PathBuf> = NEVER_READ.iter().map(PathBuf::from).collect();
        for dir in &c.never_read {
            denied.push(std::fs::canonicalize(dir).unwrap_or_else(|_| absolute(dir)));
        }
        let mut allow = Vec::new();
        for host in &c.allow_hosts {
            allow.push(HostPattern::parse(host).ok_or_else(|| {
                ConfinementError(format!(
                    "--allow-hosts '{host}' is not a host name, an address or a network (10.0.0.0/8)"
                ))
            })?);
        }
        let prefix = c
            .variable_prefix
            .clone()
            .unwrap_or_else(|| DEFAULT_VARIABLE_PREFIX.to_string());
        if prefix.is_empty() {
            return Err(ConfinementError(
                "--variable-prefix cannot be empty: every variable of the server would be readable; list the ones statements may use with --allow-variables".into(),
            ));
        }
        Ok(Self(Arc::new(Rules {
            files: Some(FileRule { roots, denied }),
            variables: Some(VariableRule {
                prefix,
                names: c.variables.clone(),
            }),
            network: Some(NetworkRule {
                deny_private: c.deny_private_networks,
                allow,
            }),
        })))
    }

    /// Whether nothing is refused.
    pub fn is_unrestricted(&self) -> bool {
        self.0.files.is_none() && self.0.variables.is_none() && self.0.network.is_none()
    }

    /// The path to read for `path`, or why it may not be read. A confined session reads
    /// only inside the allowed directories, after symbolic links are resolved, never
    /// through `..`, and never in the catalog's directory, `/proc`, `/sys` or `/dev`.
    pub fn file_read(&self, path: &Path) -> Result<PathBuf, Refusal> {
        let Some(rule) = &self.0.files else {
            return Ok(path.to_path_buf());
        };
        let shown = path.display().to_string();
        let refuse = |rule: String| {
            Refusal {
            what: format!("reading '{shown}'"),
            rule,
            help: "Read files inside a directory the server's operator allows with `tributary serve --allow-file-reads DIR`.".into(),
        }
        };
        if path.components().any(|c| c == Component::ParentDir) {
            return Err(refuse("paths with '..' are not read on this server".into()));
        }
        let resolved = resolve_existing(&absolute(path));
        if let Some(d) = rule.denied.iter().find(|d| resolved.starts_with(d)) {
            return Err(refuse(format!(
                "files under '{}' are never read on this server",
                d.display()
            )));
        }
        if rule.roots.is_empty() {
            return Err(refuse(
                "this server reads no local files (started without --allow-file-reads)".into(),
            ));
        }
        if !rule.roots.iter().any(|r| resolved.starts_with(r)) {
            return Err(refuse(
                "it is outside the directories this server reads (--allow-file-reads)".into(),
            ));
        }
        Ok(resolved)
    }

    /// Whether a `{{ name }}` reference may be resolved.
    pub fn variable(&self, name: &str) -> Result<(), Refusal> {
        let Some(rule) = &self.0.variables else {
            return Ok(());
        };
        let refuse = |rule: String| Refusal {
            what: format!("variable '{name}'"),
            rule,
            help: String::new(),
        };
        if SERVER_VARIABLES.contains(&name) {
            let mut r = refuse("it configures the server, and statements never read it".into());
            r.help = "Put the value in a variable of its own that the operator allows.".into();
            return Err(r);
        }
        if rule.names.iter().any(|n| n == name) || name.starts_with(&rule.prefix) {
            return Ok(());
        }
        let mut r = refuse(format!(
            "this server resolves only variables named {}* or listed with --allow-variables",
            rule.prefix
        ));
        r.help = format!(
            "Name the variable {}{name}, or ask the server's operator to list it with --allow-variables.",
            rule.prefix
        );
        Err(r)
    }

    /// Whether a connection to `addr` (looked up from `host`) may be opened.
    pub fn address(&self, host: &str, addr: IpAddr) -> Result<(), Refusal> {
        let Some(rule) = &self.0.network else {
            return Ok(());
        };
        let addr = canonical_ip(addr);
        if rule.allow.iter().any(|p| p.matches(host, addr)) {
            return Ok(());
        }
        let class = if is_link_local(addr) {
            Some("a link-local address (cloud metadata services live there)")
        } else if rule.deny_private && is_loopback_or_private(addr) {
            Some("a loopback or private address (--deny-private-networks)")
        } else {
            None
        };
        match class {
            None => Ok(()),
            Some(class) => Err(Refusal {
                what: format!("connecting to '{host}' ({addr})"),
                rule: format!("it is {class}, which this server does not connect to"),
                help: "Ask the server's operator to list the host with `tributary serve --allow-hosts`.".into(),
            }),
        }
    }
}

impl Default for Access {
    fn default() -> Self {
        Self::unrestricted()
    }
}

/// `path` made absolute against the current directory (without touching the disk).
fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    std::env::current_dir()
        .map(|d| d.join(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// `path` with its longest existing prefix canonicalised (symbolic links resolved), and
/// the rest appended as written: a file not yet there is judged by where it would be.
fn resolve_existing(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cur = path;
    loop {
        if let Ok(c) = std::fs::canonicalize(cur) {
            let mut out = c;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                cur = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical_ip(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => addr,
        },
        v4 => v4,
    }
}

fn is_link_local(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
    }
}

fn is_loopback_or_private(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.octets()[0] == 0
                // Shared address space (RFC 6598), used inside clouds.
                || (v4.octets()[0] == 100 && (v4.octets()[1] & 0xc0) == 64)
        }
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.is_unspecified() || (v6.segments()[0] & 0xfe00) == 0xfc00
        }
    }
}

impl HostPattern {
    fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if let Some((ip, bits)) = text.split_once('/') {
            let ip: IpAddr = ip.parse().ok()?;
            let bits: u8 = bits.parse().ok()?;
            let max = if ip.is_ipv4() { 32 } else { 128 };
            return (bits <= max).then_some(HostPattern::Network(canonical_ip(ip), bits));
        }
        if let Ok(ip) = text.trim_matches(['[', ']']).parse::<IpAddr>() {
            let ip = canonical_ip(ip);
            return Some(HostPattern::Network(
                ip,
                if ip.is_ipv4() { 32 } else { 128 },
            ));
        }
        let valid = !text.is_empty()
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
        valid.then(|| HostPattern::Name(text.to_ascii_lowercase()))
    }

    fn matches(&self, host: &str, addr: IpAddr) -> bool {
        match self {
            HostPattern::Name(n) => host.eq_ignore_ascii_case(n),
            HostPattern::Network(net, bits) => in_network(addr, *net, *bits),
        }
    }
}

fn in_network(addr: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (addr, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            (u32::from(a) & mask) == (u32::from(n) & mask)
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            (u128::from(a) & mask) == (u128::from(n) & mask)
        }
        _ => false,
    }
}

/// The metadata service address clouds answer on, for tests and documentation.
pub const CLOUD_METADATA: IpAddr = IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254));

/// IPv6's loopback, for tests.
pub const V6_LOOPBACK: IpAddr = IpAddr::V6(Ipv6Addr::LOCALHOST);

#[cfg(test)]
mod tests {
    use super::*;

    fn confined(f: impl FnOnce(&mut Confinement)) -> Access {
        let mut c = Confinement::default();
        f(&mut c);
        Access::confined(&c).expect("a valid confinement")
    }

    #[test]
    fn the_cli_reaches_everything() {
        let a = Access::unrestricted();
        assert!(a.file_read(Path::new("/proc/self/environ")).is_ok());
        assert!(a.variable("TRIBUTARY_TOKENS").is_ok());
        assert!(a.address("metadata", CLOUD_METADATA).is_ok());
    }

    #[test]
    fn files_are_read_only_inside_allowed_directories() {
        let allowed = tempfile::tempdir().unwrap();
        let catalog = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(allowed.path().join("data.json"), "{}").unwrap();
        std::fs::write(outside.path().join("secret"), "x").unwrap();
        let a = confined(|c| {
            c.file_reads = vec![allowed.path().into(), catalog.path().into()];
            c.never_read = vec![catalog.path().into()];
        });
        assert!(a.file_read(&allowed.path().join("data.json")).is_ok());
        // Not yet there: judged by where it would be.
        assert!(a.file_read(&allowed.path().join("later.json")).is_ok());
        for refused in [
            outside.path().join("secret"),
            catalog.path().join("db"),
            PathBuf::from("/proc/self/environ"),
            allowed.path().join("../x"),
        ] {
            let e = a.file_read(&refused).unwrap_err();
            assert!(e.help.contains("--allow-file-reads"), "{e}");
        }
        // A symbolic link inside an allowed directory is judged by its target.
        #[cfg(unix)]
        {
            let link = allowed.path().join("link");
            std::os::unix::fs::symlink(catalog.path(), &link).unwrap();
            let e = a.file_read(&link.join("db")).unwrap_err();
            assert!(e.rule.contains("never read"), "{e}");
            let link = allowed.path().join("out");
            std::os::unix::fs::symlink(outside.path().join("secret"), &link).unwrap();
            assert!(a.file_read(&link).is_err());
        }
    }

    #[test]
    fn without_allowed_directories_no_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let e = confined(|_| {}).file_read(dir.path()).unwrap_err();
        assert!(e.rule.contains("--allow-file-reads"), "{e}");
    }

    #[test]
    fn variables_need_the_prefix_or_the_list_and_never_the_servers_own() {
        let a = confined(|c| c.variables = vec!["KAFKA_PASSWORD".into()]);
        assert!(a.variable("TRIBUTARY_VAR_X").is_ok());
        assert!(a.variable("KAFKA_PASSWORD").is_ok());
        let e = a.variable("HOME").unwrap_err();
        assert!(e.rule.contains("TRIBUTARY_VAR_"), "{e}");
        let a = confined(|c| {
            c.variables = vec!["TRIBUTARY_TOKENS".into()];
            c.variable_prefix = Some("TRIBUTARY_".into());
        });
        assert!(a.variable("TRIBUTARY_TOKENS").is_err());
        assert!(a.variable("TRIBUTARY_CATALOG").is_err());
        assert!(
            Access::confined(&Confinement {
                variable_prefix: Some(String::new()),
                ..Default::default()
            })
            .is_err()
        );
    }

    #[test]
    fn link_local_is_refused_by_default_and_private_on_request() {
        let a = confined(|_| {});
        assert!(a.address("metadata", CLOUD_METADATA).is_err());
        assert!(a.address("x", "fe80::1".parse().unwrap()).is_err());
        assert!(
            a.address("x", "::ffff:169.254.169.254".parse().unwrap())
                .is_err()
        );
        assert!(a.address("localhost", "127.0.0.1".parse().unwrap()).is_ok());
        let a = confined(|c| {
            c.deny_private_networks = true;
            c.allow_hosts = vec!["broker.internal".into(), "10.1.0.0/16".into()];
        });
        for denied in [
            "127.0.0.1",
            "10.2.0.1",
            "192.168.1.1",
            "172.16.0.1",
            "::1",
            "fd00::1",
        ] {
            assert!(a.address("x", denied.parse().unwrap()).is_err(), "{denied}");
        }
        assert!(a.address("x", "10.1.2.3".parse().unwrap()).is_ok());
        assert!(
            a.address("Broker.Internal", "10.9.9.9".parse().unwrap())
                .is_ok()
        );
        assert!(a.address("x", "93.184.216.34".parse().unwrap()).is_ok());
        assert!(
            Access::confined(&Confinement {
                allow_hosts: vec!["not a host".into()],
                ..Default::default()
            })
            .is_err()
        );
    }
}
