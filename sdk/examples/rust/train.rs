// Trains a kiln artifact whose train_step takes f32 inputs x and y on a fixed
// batch, through the C API declared by hand (no crates), and prints the loss
// of every step. Build against an installed SDK:
//   rustc -O train.rs -L <prefix>/lib -l static=kiln_runtime -l stdc++
//   ./train ARTIFACT STEPS LR
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int};

#[repr(C)]
struct TensorInfo {
    name: *const c_char,
    dtype: c_int,
    role: c_int,
    rank: i32,
    shape: [i64; 16],
    size_bytes: usize,
}

#[repr(C)]
struct Input {
    name: *const c_char,
    dtype: c_int,
    rank: i32,
    shape: *const i64,
    data: *const u8,
    size_bytes: usize,
}

enum Opaque {}
const KILN_OK: c_int = 0;
const KILN_F32: c_int = 0;

extern "C" {
    fn kiln_last_error() -> *const c_char;
    fn kiln_version() -> *const c_char;
    fn kiln_runtime_open(device: c_int, out: *mut *mut Opaque) -> c_int;
    fn kiln_module_load(rt: *mut Opaque, path: *const c_char, out: *mut *mut Opaque) -> c_int;
    fn kiln_module_input_count(m: *mut Opaque, entry: *const c_char, n: *mut usize) -> c_int;
    fn kiln_module_input(m: *mut Opaque, entry: *const c_char, i: usize, info: *mut TensorInfo) -> c_int;
    fn kiln_trainer_new(m: *mut Opaque, seed: u64, out: *mut *mut Opaque) -> c_int;
    fn kiln_trainer_step(t: *mut Opaque, inputs: *const Input, n: usize, lr: f32, loss: *mut f32) -> c_int;
    fn kiln_trainer_close(t: *mut Opaque);
    fn kiln_module_close(m: *mut Opaque);
    fn kiln_runtime_close(rt: *mut Opaque);
}

fn check(status: c_int, what: &str) {
    if status != KILN_OK {
        let message = unsafe { CStr::from_ptr(kiln_last_error()) };
        eprintln!("{}: {}", what, message.to_string_lossy());
        std::process::exit(1);
    }
}

// The shape of train_step's input `name`, and its data in a fixed pattern.
fn make_input(m: *mut Opaque, name: &str, mul: usize, modulo: usize, shift: f32) -> (Vec<i64>, Vec<f32>) {
    let entry = CString::new("train_step").unwrap();
    let mut count = 0usize;
    check(unsafe { kiln_module_input_count(m, entry.as_ptr(), &mut count) }, "inputs");
    for i in 0..count {
        let mut info: TensorInfo = unsafe { std::mem::zeroed() };
        check(unsafe { kiln_module_input(m, entry.as_ptr(), i, &mut info) }, "input");
        if unsafe { CStr::from_ptr(info.name) }.to_str() != Ok(name) {
            continue;
        }
        let data = (0..info.size_bytes / 4)
            .map(|e| ((e * mul) % modulo) as f32 / modulo as f32 - shift)
            .collect();
        return (info.shape[..info.rank as usize].to_vec(), data);
    }
    eprintln!("train_step has no input {}", name);
    std::process::exit(1);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: {} ARTIFACT STEPS LR", args[0]);
        std::process::exit(2);
    }
    let steps: u32 = args[2].parse().expect("STEPS");
    let lr: f32 = args[3].parse().expect("LR");
    let version = unsafe { CStr::from_ptr(kiln_version()) };
    println!("kiln {}", version.to_string_lossy());
    let path = CString::new(args[1].as_str()).unwrap();
    let (mut rt, mut m, mut t) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    check(unsafe { kiln_runtime_open(0, &mut rt) }, "open");
    check(unsafe { kiln_module_load(rt, path.as_ptr(), &mut m) }, "load");
    let (x_shape, x) = make_input(m, "x", 37, 17, 0.5);
    let (y_shape, y) = make_input(m, "y", 11, 7, 0.0);
    let (x_name, y_name) = (CString::new("x").unwrap(), CString::new("y").unwrap());
    let input = |name: &CString, shape: &Vec<i64>, data: &Vec<f32>| Input {
        name: name.as_ptr(),
        dtype: KILN_F32,
        rank: shape.len() as i32,
        shape: shape.as_ptr(),
        data: data.as_ptr() as *const u8,
        size_bytes: data.len() * 4,
    };
    let inputs = [input(&x_name, &x_shape, &x), input(&y_name, &y_shape, &y)];
    check(unsafe { kiln_trainer_new(m, 0, &mut t) }, "trainer");
    for step in 1..=steps {
        let mut loss = 0f32;
        check(unsafe { kiln_trainer_step(t, inputs.as_ptr(), 2, lr, &mut loss) }, "step");
        println!("step {} loss {:.6}", step, loss);
    }
    unsafe {
        kiln_trainer_close(t);
        kiln_module_close(m);
        kiln_runtime_close(rt);
    }
}
