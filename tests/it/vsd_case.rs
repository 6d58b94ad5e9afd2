//! Data of a small robustness case and the values a Python reference gives
//! for it (suspects; ROC-AUC micro and macro as the Mann-Whitney statistic;
//! `scipy.stats.spearmanr`, SciPy 1.17.1). Model s3 writes its pairs in the
//! other orientation.

/// Three generators' rankings of four queries (ranks 0-4).
pub const RANKINGS: &str = r#"model,query,candidate,rank,score
g1,q1,b,0,1.0
g1,q1,d,1,0.9
g1,q1,c,2,0.8
g1,q1,a,3,0.7
g1,q1,e,4,0.6
g1,q2,c,0,1.0
g1,q2,f,1,0.9
g1,q2,e,2,0.8
g1,q2,d,3,0.7
g1,q2,h,4,0.6
g1,q3,f,0,1.0
g1,q3,g,1,0.9
g1,q3,a,2,0.8
g1,q3,c,3,0.7
g1,q3,d,4,0.6
g1,q4,d,0,1.0
g1,q4,f,1,0.9
g1,q4,h,2,0.8
g1,q4,e,3,0.7
g1,q4,a,4,0.6
g2,q1,d,0,1.0
g2,q1,e,1,0.9
g2,q1,g,2,0.8
g2,q1,c,3,0.7
g2,q1,a,4,0.6
g2,q2,g,0,1.0
g2,q2,c,1,0.9
g2,q2,a,2,0.8
g2,q2,h,3,0.7
g2,q2,d,4,0.6
g2,q3,e,0,1.0
g2,q3,d,1,0.9
g2,q3,f,2,0.8
g2,q3,a,3,0.7
g2,q3,b,4,0.6
g2,q4,e,0,1.0
g2,q4,a,1,0.9
g2,q4,g,2,0.8
g2,q4,h,3,0.7
g2,q4,b,4,0.6
g3,q1,f,0,1.0
g3,q1,d,1,0.9
g3,q1,b,2,0.8
g3,q1,e,3,0.7
g3,q1,a,4,0.6
g3,q2,f,0,1.0
g3,q2,b,1,0.9
g3,q2,e,2,0.8
g3,q2,d,3,0.7
g3,q2,c,4,0.6
g3,q3,f,0,1.0
g3,q3,e,1,0.9
g3,q3,a,2,0.8
g3,q3,h,3,0.7
g3,q3,b,4,0.6
g3,q4,b,0,1.0
g3,q4,e,1,0.9
g3,q4,f,2,0.8
g3,q4,c,3,0.7
g3,q4,g,4,0.6
"#;
/// The benchmark-format ground truth.
pub const GROUND_TRUTH: &str = r#"[{"key": ["q4", "a"], "value": 0}, {"key": ["q1", "b"], "value": 1}, {"key": ["q2", "b"], "value": 1}, {"key": ["q4", "b"], "value": 0}, {"key": ["q2", "c"], "value": 0}, {"key": ["q1", "d"], "value": 0}, {"key": ["q3", "d"], "value": 0}, {"key": ["q4", "d"], "value": 0}, {"key": ["q1", "e"], "value": 0}, {"key": ["q3", "e"], "value": 0}, {"key": ["q4", "e"], "value": 1}, {"key": ["q1", "f"], "value": 1}, {"key": ["q2", "f"], "value": 1}, {"key": ["q3", "f"], "value": 1}, {"key": ["q4", "f"], "value": 1}, {"key": ["q2", "g"], "value": 1}, {"key": ["q3", "g"], "value": 0}, {"key": ["q1", "h"], "value": 0}, {"key": ["q1", "a"], "value": 1}, {"key": ["q2", "a"], "value": 1}]"#;
/// Scores of model s1.
pub const S1: &str = r#"query,candidate,score
q4,a,0.67
q1,b,1.24
q2,b,0.797
q4,b,0.831
q2,c,0.796
q1,d,0.517
q3,d,0.471
q4,d,0.706
q1,e,0.409
q3,e,0.086
q4,e,1.097
q1,f,0.616
q2,f,0.838
q3,f,1.134
q4,f,0.522
q2,g,0.372
q3,g,0.123
q1,h,0.589
q1,a,0.711
q2,a,0.606
"#;
/// Scores of model s2.
pub const S2: &str = r#"query,candidate,score
q4,a,0.452
q1,b,1.228
q2,b,0.555
q4,b,0.411
q2,c,0.879
q1,d,0.612
q3,d,0.268
q4,d,0.475
q1,e,0.479
q3,e,0.142
q4,e,0.677
q1,f,0.606
q2,f,1.105
q3,f,0.623
q4,f,0.959
q2,g,1.271
q3,g,0.923
q1,h,0.376
q1,a,0.903
q2,a,0.62
"#;
/// Scores of model s3.
pub const S3: &str = r#"query,candidate,score
a,q4,0.398
b,q1,0.738
b,q2,1.043
b,q4,0.937
c,q2,0.291
d,q1,0.006
d,q3,0.449
d,q4,0.057
e,q1,0.03
e,q3,0.774
e,q4,0.362
f,q1,0.969
f,q2,0.612
f,q3,1.188
f,q4,1.103
g,q2,0.312
g,q3,0.193
h,q1,0.947
a,q1,0.863
a,q2,0.672
"#;
/// Scores of model s4.
pub const S4: &str = r#"query,candidate,score
q4,a,0.782
q1,b,1.014
q2,b,0.692
q4,b,0.469
q2,c,0.1
q1,d,0.362
q3,d,0.145
q4,d,0.626
q1,e,0.607
q3,e,0.144
q4,e,0.828
q1,f,0.297
q2,f,0.305
q3,f,0.846
q4,f,0.663
q2,g,1.1
q3,g,0.629
q1,h,0.701
q1,a,0.327
q2,a,1.033
"#;
/// Scores of model s5.
pub const S5: &str = r#"query,candidate,score
q4,a,0.084
q1,b,0.768
q2,b,1.061
q4,b,0.908
q2,c,0.893
q1,d,0.452
q3,d,0.694
q4,d,0.791
q1,e,0.137
q3,e,0.943
q4,e,1.059
q1,f,0.591
q2,f,0.928
q3,f,0.597
q4,f,0.426
q2,g,0.862
q3,g,0.064
q1,h,0.8
q1,a,1.128
q2,a,0.436
"#;
/// The expected `atelier vsd robustness --k 2 --json` output.
pub const EXPECTED: &str = r#"{"full": {"s1": {"roc_auc_micro": 0.76, "roc_auc_macro": 0.75}, "s2": {"roc_auc_micro": 0.87, "roc_auc_macro": 0.7638888888888888}, "s3": {"roc_auc_micro": 0.79, "roc_auc_macro": 0.861111111111111}, "s4": {"roc_auc_micro": 0.75, "roc_auc_macro": 0.7916666666666666}, "s5": {"roc_auc_micro": 0.65, "roc_auc_macro": 0.5694444444444444}}, "leave_out": [{"removed": "g1", "pairs": 16, "auc": {"s1": {"roc_auc_micro": 0.75, "roc_auc_macro": 0.875}, "s2": {"roc_auc_micro": 0.890625, "roc_auc_macro": 0.8333333333333334}, "s3": {"roc_auc_micro": 0.71875, "roc_auc_macro": 0.7083333333333334}, "s4": {"roc_auc_micro": 0.734375, "roc_auc_macro": 0.75}, "s5": {"roc_auc_micro": 0.6875, "roc_auc_macro": 0.5833333333333334}}, "spearman_micro": 0.7, "p_value_micro": 0.1881204043741873, "spearman_macro": 0.0, "p_value_macro": 1.0}, {"removed": "g2", "pairs": 16, "auc": {"s1": {"roc_auc_micro": 0.7936507936507936, "roc_auc_macro": 0.7916666666666666}, "s2": {"roc_auc_micro": 0.7936507936507936, "roc_auc_macro": 0.6666666666666667}, "s3": {"roc_auc_micro": 0.7777777777777778, "roc_auc_macro": 0.8541666666666666}, "s4": {"roc_auc_micro": 0.7301587301587301, "roc_auc_macro": 0.8333333333333333}, "s5": {"roc_auc_micro": 0.5555555555555556, "roc_auc_macro": 0.5833333333333333}}, "spearman_micro": 0.8207826816681233, "p_value_micro": 0.08858700531354384, "spearman_macro": 0.8999999999999998, "p_value_macro": 0.03738607346849874}, {"removed": "g3", "pairs": 17, "auc": {"s1": {"roc_auc_micro": 0.7916666666666666, "roc_auc_macro": 0.7083333333333333}, "s2": {"roc_auc_micro": 0.9027777777777778, "roc_auc_macro": 0.8333333333333333}, "s3": {"roc_auc_micro": 0.7916666666666666, "roc_auc_macro": 0.8541666666666666}, "s4": {"roc_auc_micro": 0.8055555555555556, "roc_auc_macro": 0.8125}, "s5": {"roc_auc_micro": 0.6666666666666666, "roc_auc_macro": 0.5625}}, "spearman_micro": 0.6668859288553501, "p_value_micro": 0.21889398131323157, "spearman_macro": 0.8999999999999998, "p_value_macro": 0.03738607346849874}]}"#;
