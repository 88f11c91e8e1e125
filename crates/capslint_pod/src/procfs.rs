//! Parsers for `/proc/<pid>/cgroup` and `/proc/<pid>/mountinfo`.
//!
//! Both work on raw bytes: cgroup paths and mount points need not be UTF-8. Lines that do not
//! have the documented shape are skipped rather than trusted, so a parser never fails and never
//! panics; the caller decides what a missing entry means.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// One line of `/proc/<pid>/cgroup`: `hierarchy-ID:controller-list:cgroup-path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupLine {
    /// The hierarchy ID; 0 for the cgroup v2 unified hierarchy.
    pub hierarchy: u32,
    /// The controllers bound to the hierarchy (`cpu`, `cpuacct`, `name=systemd`); empty on v2.
    pub controllers: Vec<String>,
    /// The cgroup path, relative to the root of the reader's cgroup namespace.
    pub path: PathBuf,
}

impl CgroupLine {
    /// Whether this is the cgroup v2 line (`0::/path`).
    pub fn is_unified(&self) -> bool {
        self.hierarchy == 0 && self.controllers.is_empty()
    }

    /// Whether the controller `name` is bound to this (v1) hierarchy.
    pub fn has_controller(&self, name: &str) -> bool {
        self.controllers.iter().any(|c| c == name)
    }
}

/// Parses `/proc/<pid>/cgroup`, skipping malformed lines.
pub fn parse_proc_cgroup(bytes: &[u8]) -> Vec<CgroupLine> {
    bytes.split(|&b| b == b'\n').filter_map(parse_cgroup_line).collect()
}

fn parse_cgroup_line(line: &[u8]) -> Option<CgroupLine> {
    let mut parts = line.splitn(3, |&b| b == b':');
    let hierarchy = std::str::from_utf8(parts.next()?).ok()?.parse().ok()?;
    let controllers = std::str::from_utf8(parts.next()?).ok()?;
    let path = parts.next()?;
    if !path.starts_with(b"/") {
        return None;
    }
    Some(CgroupLine {
        hierarchy,
        controllers: controllers.split(',').filter(|c| !c.is_empty()).map(str::to_owned).collect(),
        path: PathBuf::from(OsString::from_vec(path.to_vec())),
    })
}

/// The fields of one `/proc/<pid>/mountinfo` line that cgroup discovery needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// Field 4: the directory of the mounted filesystem that is mounted here. For cgroupfs, a
    /// cgroup path relative to the reader's cgroup namespace root.
    pub root: PathBuf,
    /// Field 5: where it is mounted.
    pub mount_point: PathBuf,
    /// The filesystem type (`cgroup`, `cgroup2`, ...).
    pub fs_type: String,
    /// The per-superblock options (for cgroup v1, they name the controllers: `rw,cpu,cpuacct`).
    pub super_options: Vec<String>,
}

/// Parses `/proc/<pid>/mountinfo`, skipping malformed lines.
pub fn parse_mountinfo(bytes: &[u8]) -> Vec<MountEntry> {
    bytes.split(|&b| b == b'\n').filter_map(parse_mount_line).collect()
}

fn parse_mount_line(line: &[u8]) -> Option<MountEntry> {
    let fields: Vec<&[u8]> = line.split(|&b| b == b' ').filter(|f| !f.is_empty()).collect();
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    let separator = fields.iter().skip(6).position(|f| *f == b"-")? + 6;
    let root = fields.get(3)?;
    let mount_point = fields.get(4)?;
    let fs_type = std::str::from_utf8(fields.get(separator + 1)?).ok()?;
    let super_options = fields.get(separator + 3).and_then(|f| std::str::from_utf8(f).ok()).unwrap_or("");
    Some(MountEntry {
        root: PathBuf::from(OsString::from_vec(unescape(root))),
        mount_point: PathBuf::from(OsString::from_vec(unescape(mount_point))),
        fs_type: fs_type.to_owned(),
        super_options: super_options.split(',').map(str::to_owned).collect(),
    })
}

/// Undoes the kernel's octal escapes (`\040` for a space, `\134` for a backslash).
fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal = field
            .get(i + 1..i + 4)
            .filter(|digits| field[i] == b'\\' && digits.iter().all(|d| (b'0'..=b'7').contains(d)));
        match octal {
            Some(digits) => {
                let value = digits.iter().fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
                // Three octal digits can exceed a byte (\777); keep such text as it is.
                match u8::try_from(value) {
                    Ok(byte) => {
                        out.push(byte);
                        i += 4;
                    }
                    Err(_) => {
                        out.push(field[i]);
                        i += 1;
                    }
                }
            }
            None => {
                out.push(field[i]);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn parses_v1_hybrid_and_v2_cgroup_lines() {
        let lines = parse_proc_cgroup(b"12:cpu,cpuacct:/kubepods/pod1/ctr\n1:name=systemd:/init.scope\n0::/\n");
        assert_eq!(lines.len(), 3);
        assert!(lines[0].has_controller("cpu") && lines[0].has_controller("cpuacct"));
        assert!(!lines[0].has_controller("cpuset"));
        assert_eq!(lines[0].path, Path::new("/kubepods/pod1/ctr"));
        assert!(!lines[1].has_controller("systemd"));
        assert!(lines[2].is_unified());
        assert_eq!(lines[2].path, Path::new("/"));
    }

    #[test]
    fn keeps_colons_and_non_utf8_bytes_in_cgroup_paths() {
        let lines = parse_proc_cgroup(b"0::/a:b/\xff\xfe\n");
        assert_eq!(lines[0].path.as_os_str().as_encoded_bytes(), b"/a:b/\xff\xfe");
    }

    #[test]
    fn skips_malformed_cgroup_lines() {
        let lines = parse_proc_cgroup(b"garbage\nx:cpu:/a\n3:cpu\n4:cpu:relative\n\n5:cpu:/ok");
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].hierarchy, 5);
    }

    #[test]
    fn parses_mountinfo_with_and_without_optional_fields() {
        let text = b"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime shared:9 master:2 - cgroup cgroup rw,cpu,cpuacct\n\
                     41 31 0:38 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n";
        let mounts = parse_mountinfo(text);
        assert_eq!(mounts.len(), 2);
        assert_eq!(mounts[0].fs_type, "cgroup");
        assert_eq!(mounts[0].mount_point, Path::new("/sys/fs/cgroup/cpu"));
        assert_eq!(mounts[0].super_options, ["rw", "cpu", "cpuacct"]);
        assert_eq!(mounts[1].fs_type, "cgroup2");
        assert_eq!(mounts[1].root, Path::new("/kubepods/pod1"));
    }

    #[test]
    fn unescapes_octal_sequences_in_paths() {
        let mounts = parse_mountinfo(b"1 0 0:1 /a\\040b /mnt/x\\134y\\777 rw - cgroup2 none rw\n");
        assert_eq!(mounts[0].root, Path::new("/a b"));
        assert_eq!(mounts[0].mount_point, Path::new("/mnt/x\\y\\777"));
        assert_eq!(unescape(b"\\04"), b"\\04");
        assert_eq!(unescape(b"end\\"), b"end\\");
    }

    #[test]
    fn skips_malformed_mountinfo_lines() {
        let text = b"too few fields\n1 0 0:1 / /x rw no-separator cgroup2\n1 0 0:1 / /y rw -\n\xff\n\
                     1 0 0:1 / /z rw - cgroup2\n";
        let mounts = parse_mountinfo(text);
        assert_eq!(mounts.len(), 1);
        assert_eq!(mounts[0].mount_point, Path::new("/z"));
        assert_eq!(mounts[0].super_options, [""]);
    }
}
