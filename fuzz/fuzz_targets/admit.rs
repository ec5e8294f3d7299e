//! Any bytes to the admission handler: never a panic, always a well-formed review.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for mode in [
        kudo_webhook::Mode::Mutate,
        kudo_webhook::Mode::Validate,
    ] {
        let (status, review) =
            kudo_webhook::admit_review(data, mode, &kudo_webhook::NoCluster);
        assert!(status == 200 || status == 400);
        assert!(review.get("response").is_some());
    }
});
