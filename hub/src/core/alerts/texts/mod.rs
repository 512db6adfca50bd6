//! What an alert says, in the languages of our Laws texts: English, Norwegian, Swedish,
//! Danish, Finnish and Hungarian. Each arbiter reads his own (the pager's `--lang`, the
//! arbiter's `language` in the configuration, `?lang=` on `GET /api/alerts`).
//!
//! A text is built from the alert's [`Facts`] at the time it is shown, so a stored alert
//! renders in any language. Texts speak to the arbiter only (12.6).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{AlertKind, Deadline, Facts};
use crate::core::arbiter::{GameResult, Side};
use protocol::BoardNo;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Language {
    #[default]
    #[serde(rename = "en")]
    English,
    #[serde(rename = "nb")]
    Norwegian,
    #[serde(rename = "sv")]
    Swedish,
    #[serde(rename = "da")]
    Danish,
    #[serde(rename = "fi")]
    Finnish,
    #[serde(rename = "hu")]
    Hungarian,
}

impl Language {
    pub const ALL: [Language; 6] = [
        Language::English,
        Language::Norwegian,
        Language::Swedish,
        Language::Danish,
        Language::Finnish,
        Language::Hungarian,
    ];

    pub fn code(self) -> &'static str {
        match self {
            Language::English => "en",
            Language::Norwegian => "nb",
            Language::Swedish => "sv",
            Language::Danish => "da",
            Language::Finnish => "fi",
            Language::Hungarian => "hu",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

#[derive(Debug, thiserror::Error)]
#[error("unknown language {0:?}: use en, nb, sv, da, fi or hu")]
pub struct UnknownLanguage(String);

impl FromStr for Language {
    type Err = UnknownLanguage;

    fn from_str(s: &str) -> Result<Language, UnknownLanguage> {
        let code = match s {
            "no" | "nn" => "nb",
            other => other,
        };
        Language::ALL
            .into_iter()
            .find(|l| l.code() == code)
            .ok_or_else(|| UnknownLanguage(s.to_owned()))
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// One phrase in each language, in the order of [`Language::ALL`].
type Phrase = [&'static str; 6];

const WHITE: Phrase = ["White", "Hvit", "Vit", "Hvid", "Valkea", "Világos"];
const BLACK: Phrase = ["Black", "Svart", "Svart", "Sort", "Musta", "Sötét"];
const BOARD: Phrase = ["Board", "Bord", "Bord", "Bord", "Pöytä", "Tábla"];
const ZONE: Phrase = ["Zone", "Sone", "Zon", "Zone", "Alue", "Zóna"];
const PLAY_ON: Phrase = [
    "the game continues",
    "partiet fortsetter",
    "partiet fortsätter",
    "partiet fortsætter",
    "peli jatkuu",
    "a játszma folytatódik",
];
const BEFORE_NEXT_MOVE: Phrase = [
    "Only before the opponent's next move.",
    "Kun før motstanderens neste trekk.",
    "Endast före motståndarens nästa drag.",
    "Kun før modstanderens næste træk.",
    "Vain ennen vastustajan seuraavaa siirtoa.",
    "Csak az ellenfél következő lépése előtt.",
];

/// `(what happened, what to do)` per kind, with placeholders: `{side}`, `{result}`, `{s}`
/// (seconds), `{move}`, `{detail}`, `{boards}`, `{n}`, `{diff}` (a clock's difference,
/// `+1:05`), `{since}` (" after move 12", or nothing).
fn phrases(kind: AlertKind) -> (Phrase, Phrase) {
    use AlertKind::*;
    match kind {
        FlagFall => (
            [
                "{side}'s flag fell. Result by the Laws: {result}.",
                "{side}s klaff har falt. Resultat etter reglene: {result}.",
                "{side}s tid har runnit ut. Resultat enligt reglerna: {result}.",
                "{side}s tid er udløbet. Resultat efter reglerne: {result}.",
                "{side} ylitti aikansa. Tulos sääntöjen mukaan: {result}.",
                "{side} ideje lejárt. Eredmény a szabályok szerint: {result}.",
            ],
            [
                "Go to the board, confirm the flag fall and the result.",
                "Gå til bordet, bekreft klaffefallet og resultatet.",
                "Gå till bordet, bekräfta tidsöverskridandet och resultatet.",
                "Gå til bordet, bekræft tidsoverskridelsen og resultatet.",
                "Mene pöydälle, vahvista aikaylitys ja tulos.",
                "Menjen a táblához, erősítse meg az időtúllépést és az eredményt.",
            ],
        ),
        BothFlags => (
            [
                "Both flags fell, the order unknown. By the Laws: {result}.",
                "Begge klaffer har falt, rekkefølgen ukjent. Etter reglene: {result}.",
                "Båda klockorna har fallit, ordningen okänd. Enligt reglerna: {result}.",
                "Begge tider er udløbet, rækkefølgen ukendt. Efter reglerne: {result}.",
                "Molemmat ylittivät aikansa, järjestys tuntematon. Sääntöjen mukaan: {result}.",
                "Mindkét idő lejárt, a sorrend ismeretlen. A szabályok szerint: {result}.",
            ],
            [
                "Go to the board and apply the ruling.",
                "Gå til bordet og avgjør.",
                "Gå till bordet och fatta beslut.",
                "Gå til bordet og afgør sagen.",
                "Mene pöydälle ja ratkaise.",
                "Menjen a táblához és döntsön.",
            ],
        ),
        IllegalMove => (
            [
                "Illegal move by {side} at move {move}. Penalty: {s} s to the opponent.",
                "Ulovlig trekk av {side} i trekk {move}. Straff: {s} s til motstanderen.",
                "Otillåtet drag av {side} i drag {move}. Straff: {s} s till motståndaren.",
                "Ulovligt træk af {side} i træk {move}. Straf: {s} s til modstanderen.",
                "{side} teki laittoman siirron siirrolla {move}. Rangaistus: {s} s vastustajalle.",
                "{side} szabálytalan lépése a(z) {move}. lépésben. Büntetés: {s} mp az ellenfélnek.",
            ],
            [
                "Reinstate the position before it and add the time.",
                "Gjenopprett stillingen før trekket og legg til tiden.",
                "Återställ ställningen före draget och lägg till tiden.",
                "Genopret stillingen før trækket og læg tiden til.",
                "Palauta siirtoa edeltävä asema ja lisää aika.",
                "Állítsa vissza a lépés előtti állást és adja hozzá az időt.",
            ],
        ),
        SecondIllegalMove => (
            [
                "Second illegal move by {side} at move {move}. Result by the Laws: {result}.",
                "Andre ulovlige trekk av {side} i trekk {move}. Resultat etter reglene: {result}.",
                "Andra otillåtna draget av {side} i drag {move}. Resultat enligt reglerna: {result}.",
                "Andet ulovlige træk af {side} i træk {move}. Resultat efter reglerne: {result}.",
                "{side} teki toisen laittoman siirron siirrolla {move}. Tulos sääntöjen mukaan: {result}.",
                "{side} második szabálytalan lépése a(z) {move}. lépésben. Eredmény: {result}.",
            ],
            [
                "Go to the board and declare the result.",
                "Gå til bordet og fastsett resultatet.",
                "Gå till bordet och fastställ resultatet.",
                "Gå til bordet og fastsæt resultatet.",
                "Mene pöydälle ja julista tulos.",
                "Menjen a táblához és hirdesse ki az eredményt.",
            ],
        ),
        PromotionWithoutPiece => (
            [
                "{side} pressed the clock with a pawn on the last rank and no new piece (move {move}).",
                "{side} trykket på klokken med en bonde på siste rad uten ny brikke (trekk {move}).",
                "{side} tryckte på klockan med en bonde på sista raden utan ny pjäs (drag {move}).",
                "{side} trykkede på uret med en bonde på sidste række uden ny brik (træk {move}).",
                "{side} painoi kelloa sotilas viimeisellä rivillä ilman uutta upseeria (siirto {move}).",
                "{side} megnyomta az órát, gyalog az utolsó soron, új tiszt nélkül ({move}. lépés).",
            ],
            [
                "The pawn becomes a queen; apply the penalty for an illegal move.",
                "Bonden blir dronning; gi straff for ulovlig trekk.",
                "Bonden blir dam; ge straff för otillåtet drag.",
                "Bonden bliver dronning; giv straf for ulovligt træk.",
                "Sotilaasta tulee kuningatar; anna laittoman siirron rangaistus.",
                "A gyalog vezér lesz; alkalmazza a szabálytalan lépés büntetését.",
            ],
        ),
        PressWithoutMove => (
            [
                "{side} pressed the clock without a move (move {move}).",
                "{side} trykket på klokken uten å trekke (trekk {move}).",
                "{side} tryckte på klockan utan att göra ett drag (drag {move}).",
                "{side} trykkede på uret uden at trække (træk {move}).",
                "{side} painoi kelloa tekemättä siirtoa (siirto {move}).",
                "{side} lépés nélkül nyomta meg az órát ({move}. lépés).",
            ],
            [
                "Apply the penalty for an illegal move.",
                "Gi straff for ulovlig trekk.",
                "Ge straff för otillåtet drag.",
                "Giv straf for ulovligt træk.",
                "Anna laittoman siirron rangaistus.",
                "Alkalmazza a szabálytalan lépés büntetését.",
            ],
        ),
        GameOver => (
            [
                "The game is over ({detail}): {result}.",
                "Partiet er slutt ({detail}): {result}.",
                "Partiet är slut ({detail}): {result}.",
                "Partiet er slut ({detail}): {result}.",
                "Peli on päättynyt ({detail}): {result}.",
                "A játszma véget ért ({detail}): {result}.",
            ],
            [
                "Confirm the result with the players.",
                "Bekreft resultatet med spillerne.",
                "Bekräfta resultatet med spelarna.",
                "Bekræft resultatet med spillerne.",
                "Vahvista tulos pelaajien kanssa.",
                "Erősítse meg az eredményt a játékosokkal.",
            ],
        ),
        ClockPaused => (
            [
                "A player stopped the clock.",
                "En spiller har stanset klokken.",
                "En spelare har stannat klockan.",
                "En spiller har stoppet uret.",
                "Pelaaja pysäytti kellon.",
                "Egy játékos megállította az órát.",
            ],
            [
                "Go to the board: the player is calling the arbiter.",
                "Gå til bordet: spilleren tilkaller dommeren.",
                "Gå till bordet: spelaren tillkallar domaren.",
                "Gå til bordet: spilleren tilkalder dommeren.",
                "Mene pöydälle: pelaaja kutsuu tuomaria.",
                "Menjen a táblához: a játékos a versenybírót hívja.",
            ],
        ),
        ClockSetWrong => (
            [
                "{side}'s clock shows {diff} against the time control{since}: {detail}.",
                "{side}s klokke viser {diff} mot tidskontrollen{since}: {detail}.",
                "{side}s klocka visar {diff} mot betänketiden{since}: {detail}.",
                "{side}s ur viser {diff} i forhold til tidskontrollen{since}: {detail}.",
                "{side}n kello näyttää {diff} aikarajoitukseen nähden{since}: {detail}.",
                "{side} órája {diff} eltérést mutat az időbeosztáshoz képest{since}: {detail}.",
            ],
            [
                "Check the clock with the players: correct its setting, or enter time you added as a decision.",
                "Kontroller klokken med spillerne: rett innstillingen, eller registrer tid du la til som en avgjørelse.",
                "Kontrollera klockan med spelarna: rätta inställningen, eller registrera tid du lade till som ett beslut.",
                "Kontrollér uret med spillerne: ret indstillingen, eller registrér tid, du lagde til, som en afgørelse.",
                "Tarkista kello pelaajien kanssa: korjaa asetus tai kirjaa lisäämäsi aika päätöksenä.",
                "Ellenőrizze az órát a játékosokkal: javítsa a beállítást, vagy rögzítse döntésként a hozzáadott időt.",
            ],
        ),
        TimeTrouble => (
            [
                "{side} is short of time: {s} s left.",
                "{side} er i tidsnød: {s} s igjen.",
                "{side} är i tidsnöd: {s} s kvar.",
                "{side} er i tidnød: {s} s tilbage.",
                "{side} on aikapulassa: {s} s jäljellä.",
                "{side} időzavarban van: {s} mp maradt.",
            ],
            [
                "Be present at the board.",
                "Vær til stede ved bordet.",
                "Var närvarande vid bordet.",
                "Vær til stede ved bordet.",
                "Ole läsnä pöydän luona.",
                "Legyen jelen a táblánál.",
            ],
        ),
        ZoneTimeTrouble => (
            [
                "{n} boards short of time: {boards}.",
                "{n} bord i tidsnød: {boards}.",
                "{n} bord i tidsnöd: {boards}.",
                "{n} borde i tidnød: {boards}.",
                "{n} pöytää aikapulassa: {boards}.",
                "{n} tábla időzavarban: {boards}.",
            ],
            [
                "Appoint assistants to watch the flags.",
                "Sett inn assistenter til å følge klokkene.",
                "Utse medhjälpare som följer klockorna.",
                "Udpeg assistenter til at holde øje med urene.",
                "Nimeä avustajia seuraamaan kelloja.",
                "Jelöljön ki segítőket az órák figyelésére.",
            ],
        ),
        FlagForecast => (
            [
                "{side}'s flag falls in {s} s if the player keeps thinking.",
                "{side}s klaff faller om {s} s hvis spilleren tenker videre.",
                "{side}s tid tar slut om {s} s om spelaren fortsätter tänka.",
                "{side}s tid udløber om {s} s, hvis spilleren tænker videre.",
                "{side}n aika loppuu {s} s kuluttua, jos pelaaja jatkaa miettimistä.",
                "{side} ideje {s} mp múlva lejár, ha tovább gondolkodik.",
            ],
            [
                "Watch the flag.",
                "Følg med på klaffen.",
                "Håll uppsikt över klockan.",
                "Hold øje med uret.",
                "Seuraa kelloa.",
                "Figyelje az órát.",
            ],
        ),
        OutOfSync => (
            [
                "The board has not shown the game for {s} s: pieces displaced or a sensor fault.",
                "Brettet har ikke vist partiet på {s} s: brikker forskjøvet eller sensorfeil.",
                "Brädet har inte visat partiet på {s} s: pjäser rubbade eller sensorfel.",
                "Brættet har ikke vist partiet i {s} s: brikker forskubbet eller sensorfejl.",
                "Lauta ei ole näyttänyt peliä {s} s: nappuloita siirtynyt tai anturivika.",
                "A tábla {s} mp óta nem a játszmát mutatja: elmozdult bábuk vagy érzékelőhiba.",
            ],
            [
                "Check the position on the board.",
                "Kontroller stillingen på brettet.",
                "Kontrollera ställningen på brädet.",
                "Kontrollér stillingen på brættet.",
                "Tarkista asema laudalla.",
                "Ellenőrizze az állást a táblán.",
            ],
        ),
        NodeOffline => (
            [
                "The board's node has been silent for {s} s during the game.",
                "Brettets node har vært taus i {s} s under partiet.",
                "Brädets nod har varit tyst i {s} s under partiet.",
                "Brættets node har været tavs i {s} s under partiet.",
                "Pöydän laite on ollut hiljaa {s} s pelin aikana.",
                "A tábla eszköze {s} mp óta hallgat a játszma alatt.",
            ],
            [
                "Watch the board and its clock yourself; call the technician.",
                "Følg brettet og klokken selv; tilkall teknikeren.",
                "Håll själv uppsikt över brädet och klockan; kalla på teknikern.",
                "Hold selv øje med brættet og uret; tilkald teknikeren.",
                "Seuraa lautaa ja kelloa itse; kutsu teknikko.",
                "Figyelje maga a táblát és az órát; hívja a technikust.",
            ],
        ),
        ClockSilent => (
            [
                "The clock has not reported for {s} s while it runs.",
                "Klokken har ikke rapportert på {s} s mens den går.",
                "Klockan har inte rapporterat på {s} s medan den går.",
                "Uret har ikke rapporteret i {s} s, mens det går.",
                "Kello ei ole raportoinut {s} s, vaikka se käy.",
                "Az óra {s} mp óta nem jelentett, pedig jár.",
            ],
            [
                "Watch the clock yourself; check its cable.",
                "Følg klokken selv; kontroller kabelen.",
                "Håll själv uppsikt över klockan; kontrollera kabeln.",
                "Hold selv øje med uret; kontrollér kablet.",
                "Seuraa kelloa itse; tarkista kaapeli.",
                "Figyelje maga az órát; ellenőrizze a kábelt.",
            ],
        ),
        NodeGap => (
            [
                "The node came back without events the hub had from it (it lost its memory).",
                "Noden kom tilbake uten hendelser huben hadde fra den (den mistet minnet).",
                "Noden kom tillbaka utan händelser som navet hade från den (minnet förlorat).",
                "Noden kom tilbage uden hændelser, hubben havde fra den (den mistede hukommelsen).",
                "Laite palasi ilman tapahtumia, jotka keskus oli siltä saanut (muisti menetetty).",
                "Az eszköz visszatért, de elvesztette a központ által ismert eseményeket.",
            ],
            [
                "Check the position and the clock against the hub; call the technician.",
                "Sammenlign stillingen og klokken med huben; tilkall teknikeren.",
                "Jämför ställningen och klockan med navet; kalla på teknikern.",
                "Sammenlign stillingen og uret med hubben; tilkald teknikeren.",
                "Vertaa asemaa ja kelloa keskukseen; kutsu teknikko.",
                "Vesse össze az állást és az órát a központtal; hívja a technikust.",
            ],
        ),
        LateArrival => (
            [
                "{side}'s clock has run {s} s without a move, past the allowed lateness.",
                "{side}s klokke har gått i {s} s uten trekk, over tillatt forsinkelse.",
                "{side}s klocka har gått i {s} s utan drag, över tillåten försening.",
                "{side}s ur har gået i {s} s uden træk, ud over tilladt forsinkelse.",
                "{side}n kello on käynyt {s} s ilman siirtoa, yli sallitun myöhästymisen.",
                "{side} órája {s} mp óta jár lépés nélkül, a megengedett késésen túl.",
            ],
            [
                "Check whether the player is present; if not, the game is lost.",
                "Kontroller om spilleren er til stede; hvis ikke, er partiet tapt.",
                "Kontrollera om spelaren är närvarande; om inte är partiet förlorat.",
                "Kontrollér, om spilleren er til stede; hvis ikke, er partiet tabt.",
                "Tarkista, onko pelaaja paikalla; jos ei, peli on hävitty.",
                "Ellenőrizze, jelen van-e a játékos; ha nem, a játszma elveszett.",
            ],
        ),
        ClockNotStarted => (
            [
                "The round started {s} s ago; the clock has not been started.",
                "Runden startet for {s} s siden; klokken er ikke satt i gang.",
                "Ronden startade för {s} s sedan; klockan har inte startats.",
                "Runden startede for {s} s siden; uret er ikke sat i gang.",
                "Kierros alkoi {s} s sitten; kelloa ei ole käynnistetty.",
                "A forduló {s} mp-e kezdődött; az órát nem indították el.",
            ],
            [
                "Start White's clock; check the board's node and clock.",
                "Start klokken til hvit; kontroller brettets node og klokke.",
                "Starta vits klocka; kontrollera brädets nod och klocka.",
                "Start Hvids ur; kontrollér brættets node og ur.",
                "Käynnistä valkean kello; tarkista laudan solmu ja kello.",
                "Indítsa el világos óráját; ellenőrizze a tábla csomópontját és óráját.",
            ],
        ),
        RoundFinished => (
            [
                "All {n} games of the round have a result: the round is finished.",
                "Alle {n} partier i runden har resultat: runden er ferdig.",
                "Alla {n} partier i ronden har resultat: ronden är klar.",
                "Alle {n} partier i runden har et resultat: runden er færdig.",
                "Kierroksen kaikilla {n} pelillä on tulos: kierros on päättynyt.",
                "A forduló mind a(z) {n} játszmájának van eredménye: a forduló véget ért.",
            ],
            [
                "Check the results and send them to the pairing program (GET /api/results.trf).",
                "Kontroller resultatene og send dem til paringsprogrammet (GET /api/results.trf).",
                "Kontrollera resultaten och skicka dem till lottningsprogrammet (GET /api/results.trf).",
                "Kontrollér resultaterne og send dem til parringsprogrammet (GET /api/results.trf).",
                "Tarkista tulokset ja lähetä ne parinmuodostusohjelmaan (GET /api/results.trf).",
                "Ellenőrizze az eredményeket, és küldje el őket a párosítóprogramnak (GET /api/results.trf).",
            ],
        ),
        WrongSetup => (
            [
                "Before the first move the board shows {detail}.",
                "Før første trekk viser brettet {detail}.",
                "Före första draget visar brädet {detail}.",
                "Før første træk viser brættet {detail}.",
                "Ennen ensimmäistä siirtoa laudalla on {detail}.",
                "Az első lépés előtt a táblán {detail} látható.",
            ],
            [
                "Correct the set-up before the game starts.",
                "Rett oppstillingen før partiet starter.",
                "Rätta uppställningen innan partiet börjar.",
                "Ret opstillingen, før partiet starter.",
                "Korjaa asetelma ennen pelin alkua.",
                "Javítsa ki a felállítást a játszma kezdete előtt.",
            ],
        ),
        ResultSignalMismatch => (
            [
                "The players signalled {detail}, the hub has {result}.",
                "Spillerne signaliserte {detail}, huben har {result}.",
                "Spelarna signalerade {detail}, navet har {result}.",
                "Spillerne signalerede {detail}, hubben har {result}.",
                "Pelaajat ilmoittivat {detail}, keskuksella on {result}.",
                "A játékosok {detail} eredményt jeleztek, a központban {result} áll.",
            ],
            [
                "Check the result with the players.",
                "Kontroller resultatet med spillerne.",
                "Kontrollera resultatet med spelarna.",
                "Kontrollér resultatet med spillerne.",
                "Tarkista tulos pelaajien kanssa.",
                "Ellenőrizze az eredményt a játékosokkal.",
            ],
        ),
        ResultSignalled => (
            [
                "The players signalled {result}.",
                "Spillerne signaliserte {result}.",
                "Spelarna signalerade {result}.",
                "Spillerne signalerede {result}.",
                "Pelaajat ilmoittivat tuloksen {result}.",
                "A játékosok {result} eredményt jeleztek.",
            ],
            [
                "Confirm the result (resignation or agreed draw).",
                "Bekreft resultatet (oppgitt parti eller remis).",
                "Bekräfta resultatet (uppgivet parti eller remi).",
                "Bekræft resultatet (opgivet parti eller remis).",
                "Vahvista tulos (luovutus tai sovittu tasapeli).",
                "Erősítse meg az eredményt (feladás vagy döntetlen).",
            ],
        ),
        JournalDamaged => (
            [
                "The hub's journal lost event {detail} of this board (a damaged record){since}.",
                "Hubens journal mistet hendelse {detail} fra dette bordet (en skadet post){since}.",
                "Navets journal förlorade händelse {detail} från detta bord (en skadad post){since}.",
                "Hubbens journal mistede hændelse {detail} fra dette bord (en beskadiget post){since}.",
                "Keskuksen lokista katosi tämän pöydän tapahtuma {detail} (vioittunut tietue){since}.",
                "A központ naplójából elveszett a tábla {detail}. eseménye (sérült rekord){since}.",
            ],
            [
                "Check the moves and the clock on the board against the hub; call the technician.",
                "Sammenlign trekkene og klokken på bordet med huben; tilkall teknikeren.",
                "Jämför dragen och klockan på bordet med navet; kalla på teknikern.",
                "Sammenlign trækkene og uret på bordet med hubben; tilkald teknikeren.",
                "Vertaa pöydän siirtoja ja kelloa keskukseen; kutsu teknikko.",
                "Vesse össze a tábla lépéseit és óráját a központtal; hívja a technikust.",
            ],
        ),
        ForgedMessage => (
            [
                "Messages in this board's name that its node did not seal were refused ({detail} so far){since}.",
                "Meldinger i dette bordets navn som noden ikke har forseglet, ble avvist ({detail} hittil){since}.",
                "Meddelanden i detta bords namn som noden inte förseglat avvisades ({detail} hittills){since}.",
                "Beskeder i dette bords navn, som noden ikke har forseglet, blev afvist ({detail} indtil nu){since}.",
                "Tämän pöydän nimissä tulleita viestejä, joita sen laite ei sinetöinyt, hylättiin ({detail} tähän mennessä){since}.",
                "A tábla nevében érkezett, az eszköz által nem hitelesített üzeneteket elutasítottuk (eddig {detail}){since}.",
            ],
            [
                "Nothing they said was taken. Someone on the hall network forges them: call the technician.",
                "Ingenting av dem ble tatt inn. Noen på nettet i salen forfalsker dem: tilkall teknikeren.",
                "Inget av dem togs emot. Någon i lokalens nätverk förfalskar dem: kalla på teknikern.",
                "Intet af dem blev taget. Nogen på salens netværk forfalsker dem: tilkald teknikeren.",
                "Mitään niistä ei otettu vastaan. Joku salin verkossa väärentää niitä: kutsu teknikko.",
                "Egyiket sem fogadtuk el. Valaki a terem hálózatán hamisítja őket: hívja a technikust.",
            ],
        ),
        ForgedFlood => (
            [
                "Forged messages in the names of {n} boards were refused within minutes (boards {boards}, and maybe more).",
                "Forfalskede meldinger i navnet til {n} bord ble avvist i løpet av minutter (bord {boards}, kanskje flere).",
                "Förfalskade meddelanden i {n} bords namn avvisades inom några minuter (bord {boards}, kanske fler).",
                "Forfalskede beskeder i {n} bords navn blev afvist inden for få minutter (bord {boards}, måske flere).",
                "{n} pöydän nimissä tulleita väärennettyjä viestejä hylättiin minuuttien sisällä (pöydät {boards}, ehkä muitakin).",
                "{n} tábla nevében érkezett hamisított üzeneteket utasítottunk el perceken belül ({boards}. tábla, talán több is).",
            ],
            [
                "Nothing they said was taken. Someone on the hall network is at work: call the technician.",
                "Ingenting av dem ble tatt inn. Noen på nettet i salen er i gang: tilkall teknikeren.",
                "Inget av dem togs emot. Någon i lokalens nätverk är i farten: kalla på teknikern.",
                "Intet af dem blev taget. Nogen på salens netværk er i gang: tilkald teknikeren.",
                "Mitään niistä ei otettu vastaan. Joku salin verkossa on asialla: kutsu teknikko.",
                "Egyiket sem fogadtuk el. Valaki a terem hálózatán dolgozik: hívja a technikust.",
            ],
        ),
    }
}

/// The words for a `detail` fact: how a game ended, what differs on a clock, a set-up.
fn detail_words(detail: &str) -> Option<Phrase> {
    Some(match detail {
        "checkmate" => [
            "checkmate",
            "sjakkmatt",
            "schackmatt",
            "skakmat",
            "matti",
            "matt",
        ],
        "stalemate" => ["stalemate", "patt", "patt", "pat", "patti", "patt"],
        "dead_position" => [
            "dead position",
            "død stilling",
            "död ställning",
            "død stilling",
            "kuollut asema",
            "holt állás",
        ],
        "fivefold_repetition" => [
            "fivefold repetition",
            "femfold gjentakelse",
            "femfaldig upprepning",
            "femdobbelt gentagelse",
            "viisinkertainen toisto",
            "ötszöri ismétlés",
        ],
        "seventyfive_moves" => [
            "75-move rule",
            "75-trekksregelen",
            "75-dragsregeln",
            "75-træksreglen",
            "75 siirron sääntö",
            "75 lépéses szabály",
        ],
        "wrong_base" => [
            "set to other times",
            "stilt på feil tid",
            "inställd på fel tid",
            "indstillet forkert",
            "asetettu väärin",
            "rosszul beállítva",
        ],
        "increment_missing" => [
            "no increment added",
            "tillegg ikke lagt til",
            "tillägg ej tillagt",
            "tillæg ikke lagt til",
            "lisäaikaa ei lisätty",
            "a növekmény hiányzik",
        ],
        "period_not_added" => [
            "next period not added",
            "neste periode ikke lagt til",
            "nästa period ej tillagd",
            "næste periode ikke lagt til",
            "seuraavaa jaksoa ei lisätty",
            "a következő periódus hiányzik",
        ],
        "clock_adjusted" => [
            "changed without a reason the hub knows",
            "endret uten kjent grunn",
            "ändrad utan känt skäl",
            "ændret uden kendt grund",
            "muuttunut ilman tunnettua syytä",
            "ismeretlen okból megváltozott",
        ],
        "initial_position" => [
            "a wrong initial position",
            "feil utgangsstilling",
            "fel utgångsställning",
            "forkert udgangsstilling",
            "väärä alkuasema",
            "hibás kezdőállás",
        ],
        "orientation" => [
            "the board turned the wrong way",
            "brettet snudd feil vei",
            "brädet felvänt",
            "brættet vendt forkert",
            "lauta väärin päin",
            "rosszul elforgatott tábla",
        ],
        _ => return None,
    })
}

/// " after move {n}" in each language.
const AFTER_MOVE: Phrase = [
    " after move {n}",
    " etter trekk {n}",
    " efter drag {n}",
    " efter træk {n}",
    " siirron {n} jälkeen",
    " a(z) {n}. lépés után",
];

/// A signed difference of a clock, `+1:05`, `−0:30`, `+1:02:03`.
fn signed_clock(seconds: i64) -> String {
    let sign = if seconds < 0 { '−' } else { '+' };
    let s = seconds.unsigned_abs();
    if s >= 3600 {
        format!("{sign}{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{sign}{}:{:02}", s / 60, s % 60)
    }
}

/// `(text, action)` for an alert in `language`.
pub fn render(
    kind: AlertKind,
    facts: &Facts,
    board: Option<BoardNo>,
    zone: &str,
    deadline: Option<Deadline>,
    language: Language,
) -> (String, String) {
    let i = language.index();
    let (what, todo) = phrases(kind);
    let side = facts.side.map_or("", |s| match s {
        Side::White => WHITE[i],
        Side::Black => BLACK[i],
    });
    let result = facts.result.map_or(PLAY_ON[i], GameResult::pgn);
    let detail = facts.detail.as_deref().map_or(String::new(), |d| {
        detail_words(d).map_or(d.to_owned(), |words| words[i].to_owned())
    });
    let boards: Vec<String> = facts.boards.iter().map(|b| b.0.to_string()).collect();
    let filled = what[i]
        .replace("{side}", side)
        .replace("{result}", result)
        .replace("{s}", &facts.seconds.unwrap_or(0).to_string())
        .replace("{move}", &facts.move_number.unwrap_or(0).to_string())
        .replace("{diff}", &signed_clock(facts.difference_s.unwrap_or(0)))
        .replace(
            "{since}",
            &facts.move_number.map_or(String::new(), |n| {
                AFTER_MOVE[i].replace("{n}", &n.to_string())
            }),
        )
        .replace("{detail}", &detail)
        .replace("{n}", &facts.boards.len().to_string())
        .replace("{boards}", &boards.join(", "));
    let text = match board {
        Some(n) => format!("{} {n}: {filled}", BOARD[i]),
        None => format!("{} {zone}: {filled}", ZONE[i]),
    };
    let mut action = todo[i].to_owned();
    if deadline == Some(Deadline::OpponentsNextMove) {
        action = format!("{action} {}", BEFORE_NEXT_MOVE[i]);
    }
    (text, action)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_alert_says_how_much_and_since_when() {
        let facts = Facts {
            side: Some(Side::Black),
            move_number: Some(19),
            detail: Some("clock_adjusted".into()),
            difference_s: Some(65),
            ..Facts::default()
        };
        let (text, _) = render(
            AlertKind::ClockSetWrong,
            &facts,
            Some(BoardNo(3)),
            "A",
            None,
            Language::English,
        );
        assert_eq!(
            text,
            "Board 3: Black's clock shows +1:05 against the time control after move 19: \
             changed without a reason the hub knows."
        );
        assert_eq!(signed_clock(-1800), "−30:00");
        assert_eq!(signed_clock(3723), "+1:02:03");
    }

    #[test]
    fn every_kind_speaks_every_language_without_a_placeholder_left() {
        let facts = Facts {
            side: Some(Side::White),
            result: Some(GameResult::BlackWins),
            seconds: Some(12),
            move_number: Some(31),
            detail: Some("checkmate".into()),
            difference_s: Some(-65),
            boards: vec![BoardNo(3), BoardNo(4), BoardNo(5)],
        };
        for kind in AlertKind::ALL {
            for language in Language::ALL {
                let (text, action) = render(kind, &facts, Some(BoardNo(7)), "A", None, language);
                assert!(
                    !text.contains('{') && !action.contains('{'),
                    "{kind:?} {language}: {text}"
                );
                assert!(!text.is_empty() && !action.is_empty());
            }
        }
    }

    #[test]
    fn a_flag_fall_reads_in_norwegian_with_the_side_and_result() {
        let facts = Facts {
            side: Some(Side::Black),
            result: Some(GameResult::WhiteWins),
            ..Facts::default()
        };
        let (text, _) = render(
            AlertKind::FlagFall,
            &facts,
            Some(BoardNo(12)),
            "A",
            None,
            Language::Norwegian,
        );
        assert_eq!(
            text,
            "Bord 12: Svarts klaff har falt. Resultat etter reglene: 1-0."
        );
    }

    #[test]
    fn an_illegal_move_under_a_5_2_says_before_the_next_move() {
        let (_, action) = render(
            AlertKind::IllegalMove,
            &Facts::default(),
            Some(BoardNo(1)),
            "A",
            Some(Deadline::OpponentsNextMove),
            Language::Swedish,
        );
        assert!(
            action.ends_with("Endast före motståndarens nästa drag."),
            "{action}"
        );
    }

    #[test]
    fn languages_parse_by_their_codes() {
        assert_eq!("nb".parse::<Language>().unwrap(), Language::Norwegian);
        assert_eq!("no".parse::<Language>().unwrap(), Language::Norwegian);
        assert!("de".parse::<Language>().is_err());
    }
}
