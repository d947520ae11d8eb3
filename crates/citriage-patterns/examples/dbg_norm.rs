fn main() {
    for s in std::env::args().skip(1) {
        println!("{}", citriage_patterns::normalize::normalize(&s, citriage_patterns::normalize::Profile::Default));
    }
}
