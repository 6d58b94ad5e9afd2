//! A100 questionnaires: fill-in-the-blank outfit questions with five image
//! choices. LAT takes its ground truth from the crowd's votes; AAT has an
//! expert answer key with a dimension and sub-dimension per question.

pub mod gt_file;
pub mod outfit;
