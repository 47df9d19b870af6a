fn main() {
    println!("vari");
}
