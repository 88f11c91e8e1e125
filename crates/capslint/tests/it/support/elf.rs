//! The symbol versions an ELF executable needs from its shared libraries (`GLIBC_2.17`, ...), read
//! from its `.gnu.version_r` section (`SHT_GNU_verneed`), as `readelf -V` lists them. 64-bit
//! little-endian files only, which is every Linux target capslint ships.

/// `SHT_GNU_verneed`: the section of version needs.
const SHT_GNU_VERNEED: u32 = 0x6fff_fffe;

/// For each shared library the executable needs versions from, its name and the version names.
pub fn version_needs(bytes: &[u8]) -> Result<Vec<(String, Vec<String>)>, String> {
    if bytes.get(..4) != Some(b"\x7fELF".as_slice()) {
        return Err("not an ELF file".to_string());
    }
    if bytes.get(4) != Some(&2) || bytes.get(5) != Some(&1) {
        return Err("not a 64-bit little-endian ELF file".to_string());
    }
    let section_headers = read_u64(bytes, 0x28)? as usize;
    let entry_size = read_u16(bytes, 0x3a)? as usize;
    let count = read_u16(bytes, 0x3c)? as usize;
    let section = |index: usize| -> Result<(u32, usize, usize, u32, u32), String> {
        let at = section_headers + index * entry_size;
        Ok((
            read_u32(bytes, at + 4)?,
            read_u64(bytes, at + 0x18)? as usize,
            read_u64(bytes, at + 0x20)? as usize,
            read_u32(bytes, at + 0x28)?,
            read_u32(bytes, at + 0x2c)?,
        ))
    };
    let mut needs = Vec::new();
    for index in 0..count {
        let (kind, offset, _, link, entries) = section(index)?;
        if kind != SHT_GNU_VERNEED {
            continue;
        }
        let (_, strings, strings_size, _, _) = section(link as usize)?;
        let name = |at: usize| -> Result<String, String> {
            let table = bytes.get(strings..strings + strings_size).ok_or("string table out of bounds")?;
            let text = table.get(at..).ok_or("string out of bounds")?;
            let end = text.iter().position(|byte| *byte == 0).ok_or("unterminated string")?;
            Ok(String::from_utf8_lossy(&text[..end]).into_owned())
        };
        let mut need = offset;
        for _ in 0..entries {
            let file = name(read_u32(bytes, need + 4)? as usize)?;
            let versions = read_u16(bytes, need + 2)?;
            let mut aux = need + read_u32(bytes, need + 8)? as usize;
            let mut names = Vec::new();
            for _ in 0..versions {
                names.push(name(read_u32(bytes, aux + 8)? as usize)?);
                aux += read_u32(bytes, aux + 12)? as usize;
            }
            needs.push((file, names));
            let next = read_u32(bytes, need + 12)? as usize;
            if next == 0 {
                break;
            }
            need += next;
        }
    }
    Ok(needs)
}

/// The highest `GLIBC_x.y` version among `needs`, as `(x, y)`.
pub fn highest_glibc(needs: &[(String, Vec<String>)]) -> Option<(u32, u32)> {
    needs
        .iter()
        .flat_map(|(_, versions)| versions)
        .filter_map(|version| version.strip_prefix("GLIBC_"))
        .filter_map(|number| {
            let mut parts = number.split('.').map(|part| part.parse::<u32>().ok());
            Some((parts.next()??, parts.next().flatten().unwrap_or(0)))
        })
        .max()
}

fn read_u16(bytes: &[u8], at: usize) -> Result<u16, String> {
    let slice = bytes.get(at..at + 2).ok_or("ELF field out of bounds")?;
    Ok(u16::from_le_bytes(slice.try_into().expect("two bytes")))
}

fn read_u32(bytes: &[u8], at: usize) -> Result<u32, String> {
    let slice = bytes.get(at..at + 4).ok_or("ELF field out of bounds")?;
    Ok(u32::from_le_bytes(slice.try_into().expect("four bytes")))
}

fn read_u64(bytes: &[u8], at: usize) -> Result<u64, String> {
    let slice = bytes.get(at..at + 8).ok_or("ELF field out of bounds")?;
    Ok(u64::from_le_bytes(slice.try_into().expect("eight bytes")))
}
