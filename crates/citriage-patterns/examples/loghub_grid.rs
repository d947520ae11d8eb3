use citriage_patterns::mining_eval::{evaluate, grid, parse_structured_csv, Labeled};
fn main() {
    let data = std::path::PathBuf::from(std::env::args().nth(1).unwrap());
    let mut systems = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for s in names {
        let p = data.join(&s).join(format!("{s}_2k.log_structured.csv"));
        let Ok(text) = std::fs::read_to_string(&p) else { continue };
        let (content, truth) = parse_structured_csv(&text).unwrap();
        systems.push(Labeled { system: s, content, truth });
    }
    for c in grid() {
        let g: Vec<f64> = systems.iter().map(|s| evaluate(s, &c).ga).collect();
        let m = g.iter().sum::<f64>() / g.len() as f64;
        println!(
            "{:.3} st={} R={} K={} | {}",
            m,
            c.sim_threshold,
            c.split_min_repeat,
            c.split_max_words,
            g.iter().map(|x| format!("{x:.3}")).collect::<Vec<_>>().join(" ")
        );
    }
}
