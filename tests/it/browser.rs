//! A real browser (headless Chromium via chromedriver): crowd workers answer
//! with the keyboard alone (and are never made to answer an unseen task), on
//! a laptop and a phone, and see their code again; an admin uploads a large
//! file and edits settings on the campaign page.
//!
//! Needs `chromium` and `chromium-driver` (`.ci/run` installs them). Where
//! they are missing the test says so and skips, unless
//! `ATELIER_REQUIRE_BROWSER=1` (set by CI) makes that a failure.

use crate::a100_service::{a100_campaign, question};
use crate::fixtures::{admin_token, open_vton_campaign};
use crate::support::TestApp;
use fantoccini::{ClientBuilder, Locator};
use serde_json::json;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const ENTER: &str = "\u{E007}";
const BACKSPACE: &str = "\u{E003}";

struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn chromedriver() -> Option<(Driver, u16)> {
    let present = Command::new("chromedriver").arg("--version").output().is_ok_and(|o| o.status.success());
    if !present {
        assert!(
            std::env::var("ATELIER_REQUIRE_BROWSER").is_err(),
            "chromedriver not found but ATELIER_REQUIRE_BROWSER is set (apt-get install chromium chromium-driver)"
        );
        crate::support::say_skipped("browser tests: chromedriver not found (apt-get install chromium chromium-driver)");
        return None;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
    let child = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    Some((Driver(child), port))
}

async fn connect(port: u16) -> fantoccini::Client {
    // Two TLS back-ends are linked (reqwest's and fantoccini's); pick one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let profile = tempfile::tempdir().expect("profile dir").keep();
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     format!("--user-data-dir={}", profile.display())]
        }),
    );
    // chromedriver needs a moment to listen.
    for _ in 0..50 {
        if let Ok(c) = ClientBuilder::rustls()
            .expect("tls")
            .capabilities(caps.clone())
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
        {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("could not start a Chromium session");
}

/// Presses a key once the page takes answers (its images loaded and the
/// short guard passed), as a person looking at the page would.
async fn press(client: &fantoccini::Client, key: &str) {
    client
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("body[data-ready]"))
        .await
        .expect("the page becomes ready for keys");
    client.find(Locator::Css("body")).await.expect("body").send_keys(key).await.expect("key press");
}

/// Presses a key at once, ready or not. The page may be changing under the
/// key (that is the point); a key that finds no page is simply lost.
async fn press_now(client: &fantoccini::Client, key: &str) {
    if let Ok(body) = client.find(Locator::Css("body")).await {
        let _ = body.send_keys(key).await;
    }
}

/// axe-core's script (npm's `axe-core`, installed once under the target
/// directory); `None` where npm is missing (a failure under
/// `ATELIER_REQUIRE_BROWSER`).
fn axe_source() -> Option<&'static str> {
    static SOURCE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    SOURCE
        .get_or_init(|| {
            let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("axe");
            let script = dir.join("node_modules/axe-core/axe.min.js");
            if !script.exists() {
                let _ = Command::new("npm")
                    .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
                    .arg(&dir)
                    .arg("axe-core@4.10.3")
                    .status();
            }
            let source = std::fs::read_to_string(&script).ok();
            assert!(
                source.is_some() || std::env::var("ATELIER_REQUIRE_BROWSER").is_err(),
                "axe-core could not be installed with npm but ATELIER_REQUIRE_BROWSER is set (apt-get install npm)"
            );
            if source.is_none() {
                crate::support::say_skipped("axe-core checks: npm could not install axe-core");
            }
            source
        })
        .as_deref()
}

/// Runs axe-core on the page as it is and fails on any serious or critical
/// violation, naming the page, the rule and the elements.
async fn axe(client: &fantoccini::Client, page: &str) {
    let Some(source) = axe_source() else { return };
    client.execute(source, vec![]).await.expect("axe-core loads into the page");
    let found = client
        .execute(
            "return axe.run(document, {resultTypes: ['violations']}).then(r => r.violations
               .filter(v => v.impact === 'serious' || v.impact === 'critical')
               .map(v => v.id + ' (' + v.impact + '): ' + v.help + ' at ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ')));",
            vec![],
        )
        .await
        .expect("axe runs");
    let violations: Vec<String> = serde_json::from_value(found).expect("a list");
    let url = client.current_url().await.map(|u| u.to_string()).unwrap_or_default();
    assert!(violations.is_empty(), "axe-core on {page} ({url}):\n{}", violations.join("\n"));
}

/// Fails when the page is wider than the window: on a phone nothing should
/// need sideways scrolling (tables that may scroll keep it inside them).
async fn fits_the_width(client: &fantoccini::Client, page: &str) {
    let sizes = client
        .execute("return [document.documentElement.scrollWidth, window.innerWidth];", vec![])
        .await
        .expect("layout");
    let (width, window) = (sizes[0].as_f64().expect("width"), sizes[1].as_f64().expect("window"));
    assert!(width <= window, "{page} is {width} px wide in a window of {window} px");
}

/// Logs in through the login page as a person would (name, password,
/// the button) and waits for the page it leads to, which says `landing`.
async fn log_in(browser: &fantoccini::Client, app: &TestApp, name: &str, password: &str, landing: &str) {
    browser.goto(&app.at("/login")).await.expect("login page");
    browser.find(Locator::Css("input[name=name]")).await.expect("name").send_keys(name).await.expect("type");
    browser
        .find(Locator::Css("input[name=password]"))
        .await
        .expect("password")
        .send_keys(password)
        .await
        .expect("type");
    browser.find(Locator::Css("form button[type=submit]")).await.expect("submit").click().await.expect("log in");
    wait_text(browser, landing).await;
}

async fn wait_text(client: &fantoccini::Client, text: &str) {
    let xpath = format!("//*[contains(normalize-space(.), '{text}')]");
    client
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::XPath(&xpath))
        .await
        .unwrap_or_else(|e| panic!("waiting for `{text}`: {e}"));
}

#[tokio::test]
async fn a_worker_completes_a_questionnaire_with_the_keyboard() {
    let Some((_driver, port)) = chromedriver() else { return };
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (_, invitation) =
        open_vton_campaign(&app, &admin, 2, 1, json!({"tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1}))
            .await;
    let browser = connect(port).await;
    let join_url = app.at(&format!("/join/{invitation}?worker_id=browser-worker"));

    browser.goto(&join_url).await.expect("join");
    wait_text(&browser, "How it works").await;
    axe(&browser, "the VTON landing page").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "Question 1 of 3").await;
    axe(&browser, "a VTON task").await;
    // A second key press right after the first (a double tap, a held key)
    // must not answer the next task before it is shown and loaded.
    press(&browser, "2").await;
    press_now(&browser, "3").await;
    wait_text(&browser, "Question 2 of 3").await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let answered: i64 = sqlx::query_scalar("SELECT count(*) FROM responses").fetch_one(&app.pool).await.expect("count");
    assert_eq!(answered, 1, "the quick second press answered nothing");
    assert!(browser.find(Locator::Css("button.choice.selected")).await.is_err(), "task 2 is still unanswered");

    // Reload the link: the worker resumes where they left off.
    browser.goto(&join_url).await.expect("rejoin");
    wait_text(&browser, "You have answered 1 of 3 tasks").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "Question 2 of 3").await;
    press(&browser, "3").await;
    wait_text(&browser, "Question 3 of 3").await;
    // Backspace goes back; the earlier answer is shown and can be kept.
    press(&browser, BACKSPACE).await;
    wait_text(&browser, "Question 2 of 3").await;
    let selected = browser.find(Locator::Css("button.choice.selected")).await.expect("selected answer");
    assert!(selected.text().await.expect("text").contains("Completely natural"));
    press(&browser, "3").await;
    wait_text(&browser, "Question 3 of 3").await;
    press(&browser, "1").await;
    wait_text(&browser, "You have answered all 3 tasks").await;
    axe(&browser, "the review-and-submit page").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "Thank you!").await;
    axe(&browser, "the thank-you page").await;

    let shown = browser.find(Locator::Id("completion-code")).await.expect("code").text().await.expect("text");
    let code: String =
        sqlx::query_scalar("SELECT completion_code FROM campaigns").fetch_one(&app.pool).await.expect("code");
    assert_eq!(shown.trim(), code);
    // Back after submitting: the questionnaire is submitted, not open to changes.
    browser.back().await.expect("back");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let text = browser.find(Locator::Css("body")).await.expect("body").text().await.expect("text");
    assert!(!text.contains("You can still go back and change an answer"), "{text}");
    assert!(text.contains("Thank you!"), "{text}");
    let ratings: Vec<serde_json::Value> = sqlx::query_scalar("SELECT answer FROM responses ORDER BY created_at")
        .fetch_all(&app.pool)
        .await
        .expect("answers");
    assert_eq!(ratings, vec![json!({"rating": 2}), json!({"rating": 3}), json!({"rating": 1})]);
    browser.close().await.expect("close");
}

/// Whether the element this CSS selector finds lies wholly inside the window.
async fn in_view(browser: &fantoccini::Client, css: &str) -> bool {
    let script = "const e = document.querySelector(arguments[0]); if (!e) return false; \
                  const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight;";
    browser.execute(script, vec![json!(css)]).await.expect("script").as_bool().unwrap_or(false)
}

/// Saves a screenshot under target/screenshots when ATELIER_SCREENSHOTS is set.
async fn screenshot(client: &fantoccini::Client, name: &str) {
    if std::env::var("ATELIER_SCREENSHOTS").is_ok() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
        let _ = std::fs::create_dir_all(&dir);
        if let Ok(png) = client.screenshot().await {
            let _ = std::fs::write(dir.join(format!("{name}.png")), png);
        }
    }
}

/// The choice id shown at a 1-based position on the current page.
async fn choice_at(client: &fantoccini::Client, position: usize) -> String {
    let css = format!(".cards label:nth-child({position}) input");
    client.find(Locator::Css(&css)).await.expect("choice").attr("value").await.expect("attr").expect("value")
}

#[tokio::test]
async fn a_participant_answers_an_a100_questionnaire_with_keys_1_to_5_enter_and_backspace() {
    let Some((_driver, port)) = chromedriver() else { return };
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let config = json!({"participants": 5, "background": [{"id": "fashion", "question": "Fashion background?", "options": ["yes", "no"]}]});
    let (_, invitation) =
        a100_campaign(&app, &admin, "a100-lat", vec![question("q1"), question("q2"), question("q3")], config).await;
    let browser = connect(port).await;
    browser.goto(&app.at(&format!("/join/{invitation}?worker_id=keyboard"))).await.expect("join");
    wait_text(&browser, "About you").await;
    axe(&browser, "the background questions").await;
    // Background answers with the mouse, then Enter starts.
    browser.find(Locator::Css("input[name=bg_fashion][value=no]")).await.expect("radio").click().await.expect("click");
    press(&browser, ENTER).await;
    wait_text(&browser, "Question 1 of 3").await;
    axe(&browser, "an A100 task").await;
    screenshot(&browser, "a100-question").await;

    let mut expected = Vec::new();
    expected.push(choice_at(&browser, 2).await);
    press(&browser, "2").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "Question 2 of 3").await;
    // Closing the tab and opening the link again resumes at question 2.
    browser.goto(&app.at(&format!("/join/{invitation}?worker_id=keyboard"))).await.expect("rejoin");
    wait_text(&browser, "You have answered 1 of 3 tasks").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "Question 2 of 3").await;
    expected.push(choice_at(&browser, 4).await);
    press(&browser, "4").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "Question 3 of 3").await;
    // Back to question 2: the chosen card is still selected; keep it.
    press(&browser, BACKSPACE).await;
    wait_text(&browser, "Question 2 of 3").await;
    let checked =
        browser.find(Locator::Css(".cards input:checked")).await.expect("checked").attr("value").await.expect("attr");
    assert_eq!(checked.as_deref(), Some(expected[1].as_str()));
    press(&browser, ENTER).await;
    wait_text(&browser, "Question 3 of 3").await;
    expected.push(choice_at(&browser, 1).await);
    press(&browser, "1").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "You have answered all 3 tasks").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "Thank you!").await;
    let shown = browser.find(Locator::Id("completion-code")).await.expect("code").text().await.expect("text");
    let code: String =
        sqlx::query_scalar("SELECT completion_code FROM campaigns").fetch_one(&app.pool).await.expect("code");
    assert_eq!(shown.trim(), code);

    // Stored by choice id, in the order answered, whatever the screen position was.
    let stored: Vec<String> = sqlx::query_scalar("SELECT answer->>'choice' FROM responses ORDER BY created_at")
        .fetch_all(&app.pool)
        .await
        .expect("answers");
    assert_eq!(stored, expected);
    let profile: serde_json::Value =
        sqlx::query_scalar("SELECT answers FROM participant_profiles").fetch_one(&app.pool).await.expect("profile");
    assert_eq!(profile, json!({"fashion": "no"}));
    browser.close().await.expect("close");
}

#[tokio::test]
async fn a_returning_worker_sees_the_code_again_and_a_phone_shows_choices_large_enough_to_judge() {
    let Some((_driver, port)) = chromedriver() else { return };
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (_, invitation) =
        a100_campaign(&app, &admin, "a100-lat", vec![question("q1")], json!({"participants": 3})).await;
    let browser = connect(port).await;
    browser.set_window_size(390, 844).await.expect("phone size");
    let link = app.at(&format!("/join/{invitation}?worker_id=phone"));
    browser.goto(&link).await.expect("join");
    wait_text(&browser, "How it works").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "Question 1 of 1").await;
    axe(&browser, "an A100 task at phone size").await;
    screenshot(&browser, "a100-phone").await;
    // At 390 px the five choices sit three to a row, each 100 px wide or more, with a zoom button,
    // and the outfit, the choices and Confirm fit one screen.
    let cards = browser.find_all(Locator::Css(".card-choice")).await.expect("cards");
    assert_eq!(cards.len(), 5);
    for card in &cards {
        let (_, _, width, _) = card.rectangle().await.expect("size");
        assert!(width >= 100.0, "a choice is {width} px wide on a phone");
    }
    let fits = browser
        .execute(
            "return [document.querySelector('.a100-choices button.primary').getBoundingClientRect().bottom, window.innerHeight];",
            vec![],
        )
        .await
        .expect("layout");
    let (bottom, viewport) = (fits[0].as_f64().expect("bottom"), fits[1].as_f64().expect("height"));
    assert!(bottom <= viewport, "Confirm at {bottom} px, the screen {viewport} px");
    // The outfit's captions ("Missing: Shoes" on two lines) sit above the question, not under it.
    let stacked = browser
        .execute(
            "return [Math.max(...[...document.querySelectorAll('.a100-outfit figcaption')].map(c => c.getBoundingClientRect().bottom)),
                     document.querySelector('legend.question').getBoundingClientRect().top];",
            vec![],
        )
        .await
        .expect("layout");
    let (captions, question) = (stacked[0].as_f64().expect("captions"), stacked[1].as_f64().expect("question"));
    assert!(captions <= question, "the outfit's captions end at {captions} px, the question starts at {question} px");
    browser.find(Locator::Css(".zoom-button")).await.expect("zoom button").click().await.expect("zoom");
    browser.find(Locator::Css(".zoom-overlay")).await.expect("zoomed");
    press_now(&browser, "1").await;
    assert!(browser.find(Locator::Css(".cards input:checked")).await.is_err(), "keys answer nothing while zoomed");
    browser.find(Locator::Css(".zoom-overlay")).await.expect("overlay").click().await.expect("unzoom");
    // By keyboard: Enter on the focused zoom button opens a named dialog that
    // takes focus (its close button); Escape closes it and focus comes back.
    browser.execute("document.querySelector('.zoom-button').focus();", vec![]).await.expect("focus");
    browser.active_element().await.expect("focused").send_keys(ENTER).await.expect("enter");
    let dialog = browser.find(Locator::Css(".zoom-overlay[role=dialog][aria-modal=true]")).await.expect("zoomed");
    assert!(dialog.attr("aria-label").await.expect("attr").is_some_and(|l| l.starts_with("Zoomed image")));
    let focused = browser.active_element().await.expect("focused");
    assert_eq!(focused.attr("class").await.expect("attr").as_deref(), Some("zoom-close"));
    axe(&browser, "the zoomed image at phone size").await;
    focused.send_keys("\u{E00C}").await.expect("escape");
    assert!(browser.find(Locator::Css(".zoom-overlay")).await.is_err(), "Escape closes the zoom");
    let back = browser.active_element().await.expect("focused");
    assert_eq!(back.attr("class").await.expect("attr").as_deref(), Some("zoom-button"), "focus returns");
    press(&browser, "1").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "You have answered all 1 tasks").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "Thank you!").await;
    let code: String =
        sqlx::query_scalar("SELECT completion_code FROM campaigns").fetch_one(&app.pool).await.expect("code");
    // Days later the worker opens the link again: the code is there.
    browser.goto(&link).await.expect("reopen");
    wait_text(&browser, "Your completion code").await;
    axe(&browser, "the landing page of a finished worker at phone size").await;
    let shown = browser.find(Locator::Css("p.code")).await.expect("code").text().await.expect("text");
    assert_eq!(shown.trim(), code);
    browser.close().await.expect("close");
}

#[tokio::test]
async fn an_admin_uploads_a_large_file_and_edits_settings_in_the_browser() {
    let Some((_driver, port)) = chromedriver() else { return };
    let app = TestApp::spawn().await;
    let token = admin_token(&app).await;
    let id = crate::fixtures::new_campaign(&app, &token, "vton", "browser admin").await;
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("triplets.csv");
    let mut csv = String::from("id,garment,person,tryon,reference,model,category,dataset,expected\n");
    for n in 0..14_000 {
        csv.push_str(&format!(
            "img-{n},/img/g/{n}.png,/img/p/{n}.png,/img/t/{n}.png,/img/r/{n}.png,model-a,tops,vitonhd,\n"
        ));
    }
    assert!(csv.len() > 1024 * 1024);
    std::fs::write(&file, csv).expect("file");
    let browser = connect(port).await;
    browser.set_window_size(1366, 900).await.expect("laptop size");
    browser.goto(&app.at("/login")).await.expect("login page");
    axe(&browser, "the login page").await;
    log_in(&browser, &app, "root-admin", crate::fixtures::ADMIN_PASSWORD, "Campaigns").await;
    browser.goto(&app.at(&format!("/admin/campaigns/{id}"))).await.expect("campaign page");
    browser
        .find(Locator::Css("input[type=file][name=file]"))
        .await
        .expect("file field")
        .send_keys(file.to_str().expect("path"))
        .await
        .expect("choose file");
    browser
        .find(Locator::XPath("//input[@name='file']/ancestor::form//button[@type='submit']"))
        .await
        .expect("import button")
        .click()
        .await
        .expect("import");
    wait_text(&browser, "14000 item(s) imported.").await;
    // The answer to a form is inside that form's section, and in view.
    assert!(in_view(&browser, "#import .flash").await, "the import's message is in view inside its section");
    axe(&browser, "the campaign page, its destructive actions behind a disclosure").await;

    // Settings: fewer sanity tasks than the default, in the form.
    let set = |css: &'static str, value: &'static str| {
        let browser = browser.clone();
        async move {
            let field = browser.find(Locator::Css(css)).await.expect("field");
            field.clear().await.expect("clear");
            field.send_keys(value).await.expect("type");
        }
    };
    set("#cfg-tasks_per_questionnaire", "4").await;
    set("#cfg-sanity_per_questionnaire", "1").await;
    browser
        .find(Locator::Css("#cfg-stop_sanity_failures option[value=true]"))
        .await
        .expect("option")
        .click()
        .await
        .expect("choose");
    browser
        .find(Locator::XPath("//button[normalize-space(.)='Save settings']"))
        .await
        .expect("save")
        .click()
        .await
        .expect("save");
    wait_text(&browser, "Settings saved.").await;
    let config: serde_json::Value =
        sqlx::query_scalar("SELECT config FROM campaigns").fetch_one(&app.pool).await.expect("config");
    assert_eq!(
        (config["tasks_per_questionnaire"].as_i64(), config["sanity_per_questionnaire"].as_i64()),
        (Some(4), Some(1))
    );
    assert_eq!(config["stop_sanity_failures"], true);
    assert!(in_view(&browser, "#settings .flash").await, "the settings' message is in view");
    // A refused form: the page opens at the reason, beside the form.
    set("#cfg-tasks_per_questionnaire", "-3").await;
    browser
        .find(Locator::XPath("//button[normalize-space(.)='Save settings']"))
        .await
        .expect("save")
        .click()
        .await
        .expect("save");
    wait_text(&browser, "Not saved:").await;
    assert!(in_view(&browser, "#settings [role=alert]").await, "the refusal is in view");

    // The campaign list fits a phone's width: each campaign a labelled card.
    browser.set_window_size(390, 844).await.expect("phone size");
    browser.goto(&app.at("/admin")).await.expect("campaign list");
    wait_text(&browser, "browser admin").await;
    fits_the_width(&browser, "the campaign list").await;
    axe(&browser, "the campaign list at phone size").await;
    // So does the users page, each account a card with its actions.
    browser.goto(&app.at("/admin/users")).await.expect("users page");
    wait_text(&browser, "New account").await;
    fits_the_width(&browser, "the users page").await;
    axe(&browser, "the users page at phone size").await;
    // And the backups page, its list a scrolling table.
    browser.goto(&app.at("/admin/backups")).await.expect("backups page");
    wait_text(&browser, "Back up now").await;
    fits_the_width(&browser, "the backups page").await;
    axe(&browser, "the backups page at phone size").await;
    browser.close().await.expect("close");
}

#[tokio::test]
async fn two_experts_label_vsd_pairs_with_the_keyboard_and_one_resumes_after_a_pause() {
    let Some((_driver, port)) = chromedriver() else { return };
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let id = crate::fixtures::open_vsd_campaign(
        &app,
        &admin,
        json!({"kind": "vsd", "name": "VSD keys", "config": {"k": 2, "pairs_per_batch": 2}, "settings": {"lease_minutes": 1}}),
        "model,query,candidate,rank\nm1,q1,a,0\nm1,q1,b,1\nm2,q1,a,0\nm2,q1,c,1\n",
    )
    .await;
    for name in ["keys-one", "keys-two"] {
        atelier::auth::users::create(&app.pool, atelier::auth::Role::Expert, name, "expert-password-1")
            .await
            .expect("expert");
    }
    let browser = connect(port).await;
    // The first expert labels one pair with `y`, then stops (a long pause).
    log_in(&browser, &app, "keys-one", "expert-password-1", "Your campaigns").await;
    axe(&browser, "the expert home").await;
    browser.find(Locator::LinkText("VSD keys")).await.expect("campaign link").click().await.expect("open");
    wait_text(&browser, "How it works").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "Question 1 of 2").await;
    axe(&browser, "a VSD task").await;
    // On a phone the two images share the width, neither squeezed (each
    // image takes its figure's width; these test pairs name no real image).
    browser.set_window_size(390, 844).await.expect("phone size");
    let widths = browser
        .execute(
            "return Array.from(document.querySelectorAll('.vsd-task figure')).map(f => f.getBoundingClientRect().width);",
            vec![],
        )
        .await
        .expect("layout");
    let widths: Vec<f64> = widths.as_array().expect("widths").iter().filter_map(|w| w.as_f64()).collect();
    assert!(widths.len() == 2 && widths.iter().all(|w| *w >= 150.0), "VSD figures on a phone: {widths:?} px");
    browser.set_window_size(1366, 900).await.expect("laptop size");
    // With Caps Lock on (or Shift), letter keys work the same.
    press(&browser, "Y").await;
    wait_text(&browser, "Question 2 of 2").await;

    // Meanwhile the second expert labels everything in another browser.
    let second = connect(port).await;
    log_in(&second, &app, "keys-two", "expert-password-1", "Your campaigns").await;
    second.find(Locator::LinkText("VSD keys")).await.expect("campaign link").click().await.expect("open");
    press(&second, ENTER).await;
    for batch in 0..2 {
        wait_text(&second, "Question 1 of").await;
        press(&second, "n").await;
        // A batch may hold one or two pairs (one query's pairs stay together):
        // wait for the page after the label, then see which it is (looking
        // at once may still see the first pair's page, under load).
        let next = "//*[contains(normalize-space(.), 'Question 2 of 2') or contains(normalize-space(.), 'You have answered all')]";
        second.wait().at_most(Duration::from_secs(10)).for_element(Locator::XPath(next)).await.expect("the next page");
        let two = second.find(Locator::XPath("//*[contains(., 'Question 2 of 2')]")).await.is_ok();
        if two {
            press(&second, "u").await;
        }
        wait_text(&second, "You have answered all").await;
        // One key ends a batch: Enter submits it and opens the next; the
        // thank-you page comes when none is left.
        press(&second, ENTER).await;
        if batch == 1 {
            wait_text(&second, "Thank you!").await;
        }
    }
    // The first expert's work never expires, however long the pause (the
    // lease is one minute): they resume where they were.
    let endless: bool = sqlx::query_scalar(
        "SELECT bool_and(a.leased_until > now() + interval '1000 years') FROM assignments a
         JOIN users u ON u.id = a.annotator_id WHERE u.name = 'keys-one' AND a.state = 'active'",
    )
    .fetch_one(&app.pool)
    .await
    .expect("lease");
    assert!(endless);
    browser.goto(&app.at("/expert")).await.expect("home");
    let home = browser.source().await.expect("html");
    assert!(home.contains(r#"<td class="num done" data-label="Done">1</td>"#), "1 done on the home page: {home}");
    browser.find(Locator::LinkText("VSD keys")).await.expect("campaign link").click().await.expect("open");
    wait_text(&browser, "You have answered 1 of 2 tasks").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "Question 2 of 2").await;
    press(&browser, "y").await;
    wait_text(&browser, "You have answered all").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "Question 1 of").await;
    assert!(
        browser.source().await.expect("html").contains("2 done, 1 remaining in this campaign"),
        "the submitted batch is counted on the next one's page"
    );
    press(&browser, "y").await;
    wait_text(&browser, "You have answered all").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "Thank you!").await;

    // Every label counts: the export is the votes' majority, ties negative.
    let votes: Vec<(String, i64)> = sqlx::query_as(
        "SELECT i.external_id, count(*) FILTER (WHERE r.answer->>'label' = '1') - count(*) FILTER (WHERE r.answer->>'label' = '0')
         FROM responses r JOIN items i ON i.id = r.item_id WHERE r.excluded_reason IS NULL GROUP BY i.external_id",
    )
    .fetch_all(&app.pool)
    .await
    .expect("votes");
    let responses: i64 =
        sqlx::query_scalar("SELECT count(*) FROM responses").fetch_one(&app.pool).await.expect("count");
    assert_eq!(responses, 6, "3 pairs x 2 experts, none lost");
    let benchmark: serde_json::Value = serde_json::from_str(
        &crate::fixtures::get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{id}/vsd/benchmark.json")).await,
    )
    .expect("JSON");
    for (pair, margin) in votes {
        let (a, b) = pair.split_once(" | ").expect("pair id");
        let record = benchmark
            .as_array()
            .expect("array")
            .iter()
            .find(|r| {
                let k = (r["key"][0].as_str().unwrap_or(""), r["key"][1].as_str().unwrap_or(""));
                k == (a, b) || k == (b, a)
            })
            .cloned();
        match record {
            Some(r) => assert_eq!(r["value"], i64::from(margin > 0), "{pair}"),
            None => panic!("{pair} is missing from the export: {benchmark}"),
        }
    }
    browser.close().await.ok();
    second.close().await.ok();
}

#[tokio::test]
async fn an_expert_annotates_two_masks_with_the_keyboard_and_a_reviewer_accepts_one_and_corrects_the_other() {
    use reqwest::Method;
    let Some((_driver, port)) = chromedriver() else { return };
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (_, c) = crate::fixtures::api(
        &app,
        &admin,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "fashionpedia", "name": "FP keys", "config": {"applies": {"shirt, blouse": ["silhouette"]}}})),
    )
    .await;
    let id = c["id"].as_str().expect("id").to_owned();
    let post = |path: String, body: String| {
        let (url, token) = (app.at(&path), admin.clone());
        async move {
            let r = reqwest::Client::new().post(url).bearer_auth(token).body(body).send().await.expect("post");
            assert!(r.status().is_success(), "{}", r.text().await.unwrap_or_default());
        }
    };
    let ontology = r#"{"categories": [{"id": 0, "name": "shirt, blouse", "supercategory": "upperbody", "level": 2, "taxonomy_id": "c0"}],
        "attributes": [{"id": 115, "name": "symmetrical", "supercategory": "silhouette", "level": 1, "taxonomy_id": "a115"},
                       {"id": 116, "name": "peplum", "supercategory": "silhouette", "level": 1, "taxonomy_id": "a116"}]}"#;
    post(format!("/api/v1/admin/campaigns/{id}/fashionpedia/ontology"), ontology.to_owned()).await;
    let coco = json!({"images": [{"id": 1, "width": 240, "height": 260, "file_name": "/demo/images/tops/0.svg"}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 0, "segmentation": [[60, 50, 180, 50, 180, 190, 60, 190]]},
            {"id": 2, "image_id": 1, "category_id": 0, "segmentation": {"size": [260, 240], "counts": [5200, 300, 56900]}}]});
    post(format!("/api/v1/admin/campaigns/{id}/fashionpedia/coco"), coco.to_string()).await;
    for (path, body) in [("batches", json!({"seed": 1})), ("state", json!({"state": "open"}))] {
        let (status, b) = crate::fixtures::api(
            &app,
            &admin,
            Method::POST,
            &format!("/api/v1/admin/campaigns/{id}/{path}"),
            Some(body),
        )
        .await;
        assert!(status.is_success(), "{b}");
    }
    for name in ["fp-keys-author", "fp-keys-reviewer"] {
        atelier::auth::users::create(&app.pool, atelier::auth::Role::Expert, name, "expert-password-1")
            .await
            .expect("expert");
    }
    let session = |name: &'static str| {
        let app = &app;
        async move {
            let browser = connect(port).await;
            log_in(&browser, app, name, "expert-password-1", "Your campaigns").await;
            browser.find(Locator::LinkText("FP keys")).await.expect("campaign").click().await.expect("open");
            wait_text(&browser, "How it works").await;
            press(&browser, ENTER).await;
            browser
        }
    };
    // The author: `1` ticks symmetrical on the first mask, `2` peplum on the second; Enter saves each.
    let author = session("fp-keys-author").await;
    wait_text(&author, "Question 1 of 2").await;
    axe(&author, "a Fashionpedia task").await;
    // On a phone the mask spans the screen and Save stays in view.
    author.set_window_size(390, 844).await.expect("phone size");
    let layout = author
        .execute(
            "return [document.querySelector('.fp-canvas').getBoundingClientRect().width,
                     document.querySelector('.fp-submit').getBoundingClientRect().bottom, window.innerHeight];",
            vec![],
        )
        .await
        .expect("layout");
    let (mask, save, screen) =
        (layout[0].as_f64().expect("w"), layout[1].as_f64().expect("b"), layout[2].as_f64().expect("h"));
    assert!(mask >= 300.0, "the mask is {mask} px wide on a phone");
    assert!(save <= screen, "Save at {save} px, the screen {screen} px");
    axe(&author, "a Fashionpedia task at phone size").await;
    author.set_window_size(1366, 900).await.expect("laptop size");
    // The page keeps contradictions out: "not sure" clears ticked attributes,
    // and "not on the list" needs the missing attribute named before saving.
    press(&author, "1").await;
    let checked = |css: &'static str| {
        let author = &author;
        async move {
            let element = author.find(Locator::Css(css)).await.expect("checkbox");
            element.prop("checked").await.expect("prop").as_deref() == Some("true")
        }
    };
    assert!(checked("input[name=attr][data-digit='1']").await);
    author.find(Locator::Css("input[name=not_sure]")).await.expect("not sure").click().await.expect("click");
    assert!(!checked("input[name=attr][data-digit='1']").await, "not sure clears the ticks");
    author.find(Locator::Css("input[name=not_on_list]")).await.expect("not on list").click().await.expect("click");
    assert!(!checked("input[name=not_sure]").await, "not on the list replaces not sure");
    press(&author, ENTER).await;
    assert!(
        author.source().await.expect("page").contains("Question 1 of 2"),
        "an unnamed missing attribute does not save"
    );
    author.find(Locator::Css("input[name=not_on_list]")).await.expect("not on list").click().await.expect("click");
    press(&author, "1").await;
    press(&author, ENTER).await;
    // Enter held down (its repeats reaching the next mask) must not save
    // that mask unseen; a fast expert's own press is not held back.
    wait_text(&author, "Question 2 of 2").await;
    author
        .execute(
            "document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', repeat: true, bubbles: true}));",
            vec![],
        )
        .await
        .expect("a repeated key");
    tokio::time::sleep(Duration::from_millis(800)).await;
    let saved: i64 = sqlx::query_scalar("SELECT count(*) FROM responses").fetch_one(&app.pool).await.expect("count");
    assert_eq!(saved, 1, "the quick second Enter saved nothing");
    let page = author.source().await.expect("page");
    assert!(page.contains("Question 2 of 2") && !page.contains("id=\"refusal\""), "nothing was sent: {page}");
    press(&author, "2").await;
    press(&author, ENTER).await;
    wait_text(&author, "You have answered all 2 tasks").await;
    press(&author, ENTER).await;
    wait_text(&author, "Thank you!").await;
    author.close().await.ok();

    // The reviewer starts from each answer: `a` accepts the symmetrical one
    // as it is; the peplum one is corrected (untick 2, tick 1, Enter).
    let reviewer = session("fp-keys-reviewer").await;
    wait_text(&reviewer, "reviewing another annotator").await;
    axe(&reviewer, "a Fashionpedia review task").await;
    let mut seen = Vec::new();
    for n in 1..=2 {
        wait_text(&reviewer, &format!("Question {n} of 2")).await;
        let shown = reviewer
            .find(Locator::Css(".reviewed-attributes"))
            .await
            .expect("the answer under review")
            .text()
            .await
            .expect("text");
        let ticked = |digit: &'static str| {
            let reviewer = &reviewer;
            async move {
                let css = format!("input[name=attr][data-digit='{digit}']");
                let element = reviewer.find(Locator::Css(&css)).await.expect("checkbox");
                element.prop("checked").await.expect("prop").as_deref() == Some("true")
            }
        };
        if shown == "symmetrical" {
            assert!(ticked("1").await && !ticked("2").await, "the form starts from the answer under review");
            press(&reviewer, "a").await;
        } else {
            assert!(ticked("2").await && !ticked("1").await, "the form starts from the answer under review");
            press(&reviewer, "2").await;
            press(&reviewer, "1").await;
            press(&reviewer, ENTER).await;
        }
        seen.push(shown);
    }
    seen.sort();
    assert_eq!(seen, vec!["peplum".to_owned(), "symmetrical".to_owned()], "the kind renders the answers under review");
    wait_text(&reviewer, "You have answered all 2 tasks").await;
    press(&reviewer, ENTER).await;
    wait_text(&reviewer, "Thank you!").await;
    reviewer.close().await.ok();

    let (_, gt) =
        crate::fixtures::api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{id}/ground-truth"), None)
            .await;
    let attrs: Vec<serde_json::Value> =
        gt["annotations"].as_array().expect("masks").iter().map(|m| m["attribute_ids"].clone()).collect();
    assert_eq!(attrs, vec![json!([115]), json!([115])], "{gt}");
    assert_eq!(gt["stats"]["review_acceptance"]["fp-keys-author"]["accepted"], 1, "{gt}");
    assert_eq!(gt["stats"]["review_acceptance"]["fp-keys-author"]["reviewed"], 2);
}

#[tokio::test]
async fn worker_pages_off_the_main_path_pass_axe_core_at_phone_size() {
    let Some((_driver, port)) = chromedriver() else { return };
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) =
        open_vton_campaign(&app, &admin, 2, 1, json!({"tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1}))
            .await;
    let browser = connect(port).await;
    browser.set_window_size(390, 844).await.expect("phone size");
    // MTurk's preview of the HIT: a sample task that cannot be answered.
    let preview = format!("/join/{invitation}?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H&turkSubmitTo=x");
    browser.goto(&app.at(&preview)).await.expect("preview");
    wait_text(&browser, "This is a preview").await;
    axe(&browser, "the MTurk preview").await;
    // A link that does not exist: the error page.
    browser.goto(&app.at("/join/no-such-link?worker_id=w")).await.expect("bad link");
    wait_text(&browser, "not found").await;
    axe(&browser, "the error page").await;
    // A link without the worker's id: the error says how to open it.
    browser.goto(&app.at(&format!("/join/{invitation}"))).await.expect("no id");
    wait_text(&browser, "missing your worker id").await;
    axe(&browser, "the missing-id page").await;
    // Another worker's link in a browser already working as someone: asked, not switched.
    browser.goto(&app.at(&format!("/join/{invitation}?worker_id=first"))).await.expect("join");
    wait_text(&browser, "How it works").await;
    browser.goto(&app.at(&format!("/join/{invitation}?worker_id=second"))).await.expect("other id");
    wait_text(&browser, "Which worker are you?").await;
    axe(&browser, "the which-worker page").await;
    // A questionnaire whose time ran out: the reason beside the task, and the way on.
    browser.goto(&app.at(&format!("/work/{campaign}"))).await.expect("landing");
    wait_text(&browser, "How it works").await;
    browser
        .find(Locator::XPath("//form[contains(@action, '/start')]//button[@type='submit']"))
        .await
        .expect("start")
        .click()
        .await
        .expect("start");
    wait_text(&browser, "Question 1 of").await;
    sqlx::query("UPDATE assignments SET state = 'expired', leased_until = now() - interval '1 second'")
        .execute(&app.pool)
        .await
        .expect("the time runs out");
    browser.refresh().await.expect("reload");
    wait_text(&browser, "The time for this questionnaire ran out").await;
    axe(&browser, "the task page of a questionnaire whose time ran out").await;
    // The campaign closed: the landing page says so.
    let (status, _) = crate::fixtures::api(
        &app,
        &admin,
        reqwest::Method::POST,
        &format!("/api/v1/admin/campaigns/{campaign}/state"),
        Some(json!({"state": "closed"})),
    )
    .await;
    assert!(status.is_success());
    browser.goto(&app.at(&format!("/work/{campaign}"))).await.expect("landing");
    wait_text(&browser, "not open right now").await;
    axe(&browser, "the landing page of a closed campaign").await;
    browser.close().await.expect("close");
}

#[tokio::test]
async fn on_a_phone_the_try_on_and_the_three_answers_fit_one_screen() {
    let Some((_driver, port)) = chromedriver() else { return };
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    // Real, tall images (a portrait try-on is 3:4), uploaded as an admin would.
    let resp = reqwest::Client::new()
        .post(app.at("/api/v1/admin/images"))
        .bearer_auth(&admin)
        .header("content-type", "image/png")
        .body(crate::fixtures::png(600, 800, 120))
        .send()
        .await
        .expect("upload");
    let url = resp.json::<serde_json::Value>().await.expect("json")["url"].as_str().expect("url").to_owned();
    let (status, c) = crate::fixtures::api(
        &app,
        &admin,
        reqwest::Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "vton", "name": "Phone", "config": {"background": [], "tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1}})),
    )
    .await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{c}");
    let id = c["id"].as_str().expect("id").to_owned();
    let item = |n: usize, gold: Option<u8>| {
        json!({"external_id": format!("i{n}"), "gold": gold.map(|g| json!({"rating": g})),
               "payload": {"tryon": url, "garment": url, "person": url, "reference": url, "model": "m", "category": "tops", "dataset": "d"}})
    };
    let items = vec![item(0, None), item(1, None), item(2, Some(1))];
    for (path, body) in
        [("items", json!({"items": items})), ("batches", json!({"seed": 1})), ("state", json!({"state": "open"}))]
    {
        let (status, b) = crate::fixtures::api(
            &app,
            &admin,
            reqwest::Method::POST,
            &format!("/api/v1/admin/campaigns/{id}/{path}"),
            Some(body),
        )
        .await;
        assert!(status.is_success(), "{path}: {b}");
    }
    let (_, inv) = crate::fixtures::api(
        &app,
        &admin,
        reqwest::Method::POST,
        &format!("/api/v1/admin/campaigns/{id}/invitations"),
        None,
    )
    .await;
    let browser = connect(port).await;
    browser.set_window_size(390, 844).await.expect("phone size");
    browser
        .goto(&app.at(&format!("/join/{}?worker_id=phone-rater", inv["token"].as_str().expect("token"))))
        .await
        .expect("join");
    wait_text(&browser, "How it works").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "Question 1 of 3").await;
    press(&browser, "\u{E000}").await; // (no-op key: waits until the page is ready, images loaded)
    screenshot(&browser, "vton-phone").await;
    let layout = browser
        .execute(
            "const r = s => document.querySelector(s).getBoundingClientRect();
             const answers = [...document.querySelectorAll('.answers .choice')].map(b => b.getBoundingClientRect());
             return {viewport: window.innerHeight, tryon_top: r('.tryon img').top, tryon_height: r('.tryon img').height,
                     answers_bottom: Math.max(...answers.map(a => a.bottom)), answer_min_height: Math.min(...answers.map(a => a.height)),
                     kbd_shown: getComputedStyle(document.querySelector('.answers kbd')).display !== 'none'};",
            vec![],
        )
        .await
        .expect("layout");
    let number = |k: &str| layout[k].as_f64().unwrap_or_else(|| panic!("{k}: {layout}"));
    assert!(number("tryon_height") >= 200.0, "the try-on is large enough to judge: {layout}");
    assert!(number("tryon_top") >= 0.0 && number("answers_bottom") <= number("viewport"), "one screen: {layout}");
    assert!(number("answer_min_height") >= 44.0, "tap targets of 44 px: {layout}");
    axe(&browser, "a VTON task at phone size").await;
    browser.close().await.expect("close");
}

#[tokio::test]
async fn an_admin_browses_the_data_on_a_phone_with_the_mouse_alone() {
    let Some((_driver, port)) = chromedriver() else { return };
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) =
        open_vton_campaign(&app, &admin, 6, 1, json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1}))
            .await;
    let worker = crate::fixtures::join(&app, &invitation, "phone-data-worker").await;
    let (_, view) = worker.next(&app, &campaign).await;
    worker.finish(&app, &view, 2).await;

    let browser = connect(port).await;
    browser.set_window_size(390, 844).await.expect("phone size");
    log_in(&browser, &app, "root-admin", crate::fixtures::ADMIN_PASSWORD, "Campaigns").await;
    browser.goto(&app.at(&format!("/admin/campaigns/{campaign}"))).await.expect("campaign page");
    browser.find(Locator::LinkText("Browse the items")).await.expect("link").click().await.expect("open");
    wait_text(&browser, "7 item(s)").await;
    axe(&browser, "the data browser at phone size").await;
    fits_the_width(&browser, "the data browser").await;
    // Filter with the mouse: items with a known answer.
    browser
        .find(Locator::Css("select[name=known] option[value=yes]"))
        .await
        .expect("option")
        .click()
        .await
        .expect("pick");
    browser
        .find(Locator::XPath("//button[normalize-space(.)='Show']"))
        .await
        .expect("show")
        .click()
        .await
        .expect("show");
    wait_text(&browser, "1 item(s)").await;
    let selected = browser.find(Locator::Css("select[name=known]")).await.expect("select").prop("value").await;
    assert_eq!(selected.expect("value").as_deref(), Some("yes"), "the filter stays as chosen");
    browser.find(Locator::LinkText("sanity-1000")).await.expect("item link").click().await.expect("open item");
    wait_text(&browser, "1 answer(s)").await;
    wait_text(&browser, "Slightly unnatural").await;
    axe(&browser, "an item of the data browser at phone size").await;
    fits_the_width(&browser, "an item of the data browser").await;
    // Exclude the answer with the mouse: the form asks first, then says what changed.
    browser
        .find(Locator::XPath("//summary[normalize-space(.)='Exclude…']"))
        .await
        .expect("disclosure")
        .click()
        .await
        .expect("open");
    browser
        .find(Locator::Css("td input[name=reason]"))
        .await
        .expect("reason")
        .send_keys("tapped at random")
        .await
        .expect("type");
    browser
        .find(Locator::XPath("//button[normalize-space(.)='Exclude this answer']"))
        .await
        .expect("exclude")
        .click()
        .await
        .expect("exclude");
    wait_text(&browser, "The answer is excluded: tapped at random.").await;
    wait_text(&browser, "excluded: tapped at random").await;
    axe(&browser, "an item with an excluded answer at phone size").await;
    browser.close().await.expect("close");
}

#[tokio::test]
async fn long_names_and_an_expert_s_counts_fit_a_phone_with_nothing_cut_off() {
    let Some((_driver, port)) = chromedriver() else { return };
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    // VSD items are named by their two images, which are long addresses in real rankings.
    let long = |n: &str| format!("https://images.example.com/street2shop/retrieval/{n}_front_view_1024px.jpg");
    let rankings = format!(
        "model,query,candidate,rank\nm1,{q},{a},0\nm1,{q},{b},1\n",
        q = long("q1"),
        a = long("a"),
        b = long("b")
    );
    let id = crate::fixtures::open_vsd_campaign(
        &app,
        &admin,
        json!({"kind": "vsd", "name": "Street-to-shop suspects, spring collection", "config": {"k": 2}}),
        &rankings,
    )
    .await;
    atelier::auth::users::create(&app.pool, atelier::auth::Role::Expert, "phone-expert", "expert-password-1")
        .await
        .expect("expert");

    let browser = connect(port).await;
    browser.set_window_size(390, 844).await.expect("phone size");
    log_in(&browser, &app, "phone-expert", "expert-password-1", "Your campaigns").await;
    fits_the_width(&browser, "the expert home").await;
    axe(&browser, "the expert home at phone size").await;
    // A task: the progress line with the expert's counts wraps inside its pill, none of its text cut off.
    browser.find(Locator::Css("a[href^='/work/']")).await.expect("campaign link").click().await.expect("open");
    wait_text(&browser, "How it works").await;
    press(&browser, ENTER).await;
    wait_text(&browser, "remaining in this campaign").await;
    let clipped = browser
        .execute(
            "const pill = document.querySelector('.progress').getBoundingClientRect();
             const text = document.createRange();
             text.selectNodeContents(document.querySelector('.progress .label'));
             const label = text.getBoundingClientRect();
             return [label.bottom, pill.bottom, label.right, pill.right];",
            vec![],
        )
        .await
        .expect("layout");
    let edge = |i: usize| clipped[i].as_f64().expect("px");
    assert!(edge(0) <= edge(1) && edge(2) <= edge(3), "the progress line runs out of its pill: {clipped}");
    fits_the_width(&browser, "a VSD task").await;
    browser.goto(&app.at("/expert")).await.expect("home");
    browser.find(Locator::LinkText("Your account")).await.expect("account link").click().await.expect("account");
    wait_text(&browser, "Change your password").await;
    fits_the_width(&browser, "the account page").await;
    axe(&browser, "the account page at phone size").await;
    browser.find(Locator::Css("form[action='/logout'] button")).await.expect("log out").click().await.expect("out");

    log_in(&browser, &app, "root-admin", crate::fixtures::ADMIN_PASSWORD, "Campaigns").await;
    browser.goto(&app.at(&format!("/admin/campaigns/{id}/data"))).await.expect("data browser");
    wait_text(&browser, "2 item(s)").await;
    fits_the_width(&browser, "the data browser of long names").await;
    browser.find(Locator::Css("a[href*='/data/']")).await.expect("an item").click().await.expect("open item");
    wait_text(&browser, "answer(s)").await;
    fits_the_width(&browser, "an item named by two long addresses").await;
    axe(&browser, "an item named by two long addresses at phone size").await;
    browser.close().await.expect("close");
}
