//! BFCL's `VehicleControlAPI`: a car's engine, doors, climate, brakes and cruise
//! control, plus a few lookups. Random readings come from the instance's own
//! `random.Random`.

use std::sync::LazyLock;

use super::seeded_random;
use super::tables::{TABLES, pair};
use super::{
    Method, PyException, World, bind_method, dict, error, get_mut, num, opt, py_arith, py_cmp,
    py_float, req, s,
};
use crate::bfcl::pyfmt::py_str;
use crate::bfcl::pyrandom::Random;
use crate::bfcl::value::PyValue;

const CLASS: &str = "VehicleControlAPI";

/// Seed used when the config sets no `random_seed` (no dataset item does).
const DEFAULT_SEED: i128 = 141053;

const METHODS: &[Method] = &[
    ("startEngine", &[req("ignitionMode")]),
    ("fillFuelTank", &[req("fuelAmount")]),
    ("lockDoors", &[req("unlock"), req("door")]),
    (
        "adjustClimateControl",
        &[
            req("temperature"),
            opt("unit", "'celsius'"),
            opt("fanSpeed", "50"),
            opt("mode", "'auto'"),
        ],
    ),
    ("get_outside_temperature_from_google", &[]),
    ("get_outside_temperature_from_weather_com", &[]),
    ("setHeadlights", &[req("mode")]),
    ("displayCarStatus", &[req("option")]),
    ("activateParkingBrake", &[req("mode")]),
    ("pressBrakePedal", &[req("pedalPosition")]),
    ("releaseBrakePedal", &[]),
    (
        "setCruiseControl",
        &[req("speed"), req("activate"), req("distanceToNextVehicle")],
    ),
    ("get_current_speed", &[]),
    ("display_log", &[req("messages")]),
    ("estimate_drive_feasibility_by_mileage", &[req("distance")]),
    ("liter_to_gallon", &[req("liter")]),
    ("gallon_to_liter", &[req("gallon")]),
    ("estimate_distance", &[req("cityA"), req("cityB")]),
    ("get_zipcode_based_on_city", &[req("city")]),
    ("set_navigation", &[req("destination")]),
    ("check_tire_pressure", &[]),
    ("find_nearest_tire_shop", &[]),
];

/// Public attributes in Python's order, then the config key each is read from.
const PUBLIC: &[(&str, &str)] = &[
    ("fuelLevel", "fuelLevel"),
    ("batteryVoltage", "batteryVoltage"),
    ("engine_state", "engineState"),
    ("remainingUnlockedDoors", ""),
    ("doorStatus", "doorStatus"),
    ("acTemperature", "acTemperature"),
    ("fanSpeed", "fanSpeed"),
    ("acMode", "acMode"),
    ("humidityLevel", "humidityLevel"),
    ("headLightStatus", "headLightStatus"),
    ("parkingBrakeStatus", "parkingBrakeStatus"),
    ("brakePedalStatus", "brakePedalStatus"),
    ("distanceToNextVehicle", "distanceToNextVehicle"),
    ("cruiseStatus", "cruiseStatus"),
    ("destination", "destination"),
    ("frontLeftTirePressure", "frontLeftTirePressure"),
    ("frontRightTirePressure", "frontRightTirePressure"),
    ("rearLeftTirePressure", "rearLeftTirePressure"),
    ("rearRightTirePressure", "rearRightTirePressure"),
    ("long_context", ""),
];

/// Tank capacity in gallons.
const MAX_FUEL: f64 = 50.0;
/// Miles per gallon used by `estimate_drive_feasibility_by_mileage`.
const MPG: f64 = 20.0;

/// What BFCL's methods add in `long_context` mode (the extensions of its
/// `long_context.py`), read from the `VehicleControlAPI.long_context` entry of
/// `tables.json`.
struct LongContext {
    /// `check_tire_pressure`'s `car_info` and `displayCarStatus`'s `metadata`.
    car_info: String,
    /// `estimate_distance`'s `intermediaryCities`.
    intermediary_cities: PyValue,
    /// `activateParkingBrake`'s `parkingBrakeInstruction`.
    parking_brake_instruction: String,
    /// `get_outside_temperature_from_google`'s answer before its last entry,
    /// `outsideTemperature`.
    weather: Vec<(PyValue, PyValue)>,
}

static LONG_CONTEXT: LazyLock<LongContext> = LazyLock::new(|| {
    let all: serde_json::Value = serde_json::from_str(include_str!("tables.json"))
        .expect("src/bfcl/worlds/tables.json parses");
    let lc = &all[CLASS]["long_context"];
    let text = |key: &str| lc[key].as_str().expect("long_context text").to_string();
    // The weather dict is stored as a JSON text, which keeps BFCL's key order.
    let weather: serde_json::Value =
        serde_json::from_str(&text("weather")).expect("long_context weather parses");
    LongContext {
        car_info: text("car_info"),
        intermediary_cities: PyValue::from_json(&lc["intermediary_cities"]),
        parking_brake_instruction: text("parking_brake_instruction"),
        weather: match PyValue::from_json(&weather) {
            PyValue::Dict(d) => d,
            _ => panic!("long_context weather is a dict"),
        },
    }
});

/// State of a `VehicleControlAPI` instance.
#[derive(Debug, Clone)]
pub struct VehicleControlApi {
    /// Public attributes, in [`PUBLIC`]'s order.
    attrs: Vec<(&'static str, PyValue)>,
    parking_brake_force: PyValue,
    slope_angle: PyValue,
    brake_pedal_force: PyValue,
    random: Random,
}

fn door_dict(status: &str) -> PyValue {
    dict([
        ("driver", s(status)),
        ("passenger", s(status)),
        ("rear_left", s(status)),
        ("rear_right", s(status)),
    ])
}

impl Default for VehicleControlApi {
    fn default() -> Self {
        let f = PyValue::Float;
        let defaults = [
            f(0.0),
            f(12.6),
            s("stopped"),
            PyValue::Int(4),
            door_dict("unlocked"),
            f(25.0),
            PyValue::Int(50),
            s("auto"),
            f(50.0),
            s("off"),
            s("released"),
            s("released"),
            f(50.0),
            s("inactive"),
            s("None"),
            f(32.0),
            f(32.0),
            f(30.0),
            f(30.0),
            PyValue::Bool(false),
        ];
        VehicleControlApi {
            attrs: PUBLIC.iter().map(|(n, _)| *n).zip(defaults).collect(),
            parking_brake_force: f(0.0),
            slope_angle: f(0.0),
            brake_pedal_force: f(0.0),
            random: Random::new(DEFAULT_SEED),
        }
    }
}

impl VehicleControlApi {
    fn attr(&self, name: &str) -> &PyValue {
        &self
            .attrs
            .iter()
            .find(|(n, _)| *n == name)
            .expect("known attribute")
            .1
    }

    fn set(&mut self, name: &str, v: PyValue) {
        if let Some(slot) = self.attrs.iter_mut().find(|(n, _)| *n == name) {
            slot.1 = v;
        }
    }

    fn long_context(&self) -> bool {
        matches!(self.attr("long_context"), PyValue::Bool(true))
    }

    fn is(&self, name: &str, text: &str) -> bool {
        matches!(self.attr(name), PyValue::Str(t) if t == text)
    }

    fn unlocked_doors(&self) -> Vec<String> {
        match self.attr("doorStatus") {
            PyValue::Dict(d) => d
                .iter()
                .filter(|(_, v)| matches!(v, PyValue::Str(t) if t == "unlocked"))
                .map(|(k, _)| py_str(k))
                .collect(),
            _ => Vec::new(),
        }
    }

    fn start_engine(&mut self, mode: &PyValue) -> Result<PyValue, PyException> {
        let mode_is = |m: &str| matches!(mode, PyValue::Str(t) if t == m);
        // STOP changes the state before the checks, which then still run.
        if mode_is("STOP") {
            self.set("engine_state", s("stopped"));
        }
        if py_cmp(self.attr("remainingUnlockedDoors"), ">", &PyValue::Int(0))? {
            return Ok(error(format!(
                "All doors must be locked before starting the engine. Here are the unlocked doors: {}",
                self.unlocked_doors().join(", ")
            )));
        }
        if !self.is("brakePedalStatus", "pressed") {
            return Ok(error(
                "Brake pedal needs to be pressed when starting the engine.",
            ));
        }
        if !self.brake_pedal_force.py_eq(&PyValue::Float(1000.0)) {
            return Ok(error(
                "Must press the brake fully before starting the engine.",
            ));
        }
        if py_cmp(self.attr("fuelLevel"), "<", &PyValue::Int(0))? {
            // Unreachable with a non-negative level; the text is not pinned by a fixture.
            return Ok(error("Fuel tank is empty."));
        }
        if !mode_is("START") {
            return Ok(error("Invalid ignition mode."));
        }
        self.set("engine_state", s("running"));
        Ok(dict([
            ("engineState", s("running")),
            ("fuelLevel", self.attr("fuelLevel").clone()),
            ("batteryVoltage", self.attr("batteryVoltage").clone()),
        ]))
    }

    fn lock_doors(&mut self, unlock: &PyValue, doors: &PyValue) -> Result<PyValue, PyException> {
        let unlock = super::truthy(unlock);
        let (target, step) = if unlock {
            ("unlocked", 1)
        } else {
            ("locked", -1)
        };
        let doors = match doors {
            PyValue::List(l) | PyValue::Tuple(l) => l.clone(),
            other => vec![other.clone()],
        };
        for d in &doors {
            let mut status = self.attr("doorStatus").clone();
            let key = py_str(d);
            let Some(slot) = get_mut(&mut status, &key) else {
                return Err(PyException::key_error(d));
            };
            if matches!(slot, PyValue::Str(t) if t == target) {
                continue;
            }
            *slot = s(target);
            self.set("doorStatus", status);
            let n = py_arith(
                self.attr("remainingUnlockedDoors"),
                '+',
                &PyValue::Int(step),
            )?;
            self.set("remainingUnlockedDoors", n);
        }
        Ok(dict([
            ("lockStatus", s(target)),
            (
                "remainingUnlockedDoors",
                self.attr("remainingUnlockedDoors").clone(),
            ),
        ]))
    }

    fn dispatch(&mut self, m: &str, a: Vec<PyValue>) -> Result<PyValue, PyException> {
        let zero = PyValue::Int(0);
        Ok(match m {
            "startEngine" => return self.start_engine(&a[0]),
            "fillFuelTank" => {
                if py_cmp(&a[0], "<", &zero)? {
                    return Ok(error("Fuel amount cannot be negative."));
                }
                let total = py_arith(self.attr("fuelLevel"), '+', &a[0])?;
                if py_cmp(&total, ">", &PyValue::Float(MAX_FUEL))? {
                    return Ok(error("Cannot fill gas above the tank capacity."));
                }
                self.set("fuelLevel", total.clone());
                dict([("fuelLevel", total)])
            }
            "lockDoors" => return self.lock_doors(&a[0], &a[1]),
            "adjustClimateControl" => {
                let [temp, unit, fan, mode]: [PyValue; 4] = a.try_into().expect("bound");
                if py_cmp(&fan, "<", &zero)? || py_cmp(&fan, ">", &PyValue::Int(100))? {
                    return Ok(error("Fan speed must be between 0 and 100."));
                }
                let stored = if matches!(&unit, PyValue::Str(u) if u == "fahrenheit") {
                    let t = num(&temp).ok_or_else(|| {
                        PyException::type_error(format!(
                            "unsupported operand type(s) for -: '{}' and 'int'",
                            temp.type_name()
                        ))
                    })?;
                    PyValue::Float((t - 32.0) * 5.0 / 9.0)
                } else {
                    temp.clone()
                };
                self.set("acTemperature", stored);
                self.set("fanSpeed", fan);
                self.set("acMode", mode.clone());
                dict([
                    ("currentACTemperature", temp),
                    ("climateMode", mode),
                    ("humidityLevel", self.attr("humidityLevel").clone()),
                ])
            }
            "get_outside_temperature_from_google" => {
                let t = (
                    s("outsideTemperature"),
                    PyValue::Float(self.random.uniform(-10.0, 40.0)),
                );
                let mut out = if self.long_context() {
                    LONG_CONTEXT.weather.clone()
                } else {
                    Vec::new()
                };
                out.push(t);
                PyValue::Dict(out)
            }
            "get_outside_temperature_from_weather_com" => dict([("error", PyValue::Int(404))]),
            "setHeadlights" => {
                let mode = match &a[0] {
                    PyValue::Str(t) if ["on", "off", "auto"].contains(&t.as_str()) => t.clone(),
                    _ => return Ok(error("Invalid headlight mode.")),
                };
                let status = if mode == "on" { "on" } else { "off" };
                self.set("headLightStatus", s(status));
                dict([("headlightStatus", s(status))])
            }
            "displayCarStatus" => {
                let status = self.display(&a[0]);
                match status {
                    PyValue::Dict(fields) if self.long_context() => {
                        let mut out = vec![(s("metadata"), s(LONG_CONTEXT.car_info.as_str()))];
                        out.extend(fields);
                        PyValue::Dict(out)
                    }
                    other => other,
                }
            }
            "activateParkingBrake" => {
                let (status, force) = match &a[0] {
                    PyValue::Str(t) if t == "engage" => ("engaged", 500.0),
                    PyValue::Str(t) if t == "release" => ("released", 0.0),
                    _ => return Ok(error("Invalid mode")),
                };
                self.set("parkingBrakeStatus", s(status));
                self.parking_brake_force = PyValue::Float(force);
                self.slope_angle = PyValue::Float(10.0);
                let mut out = Vec::new();
                if self.long_context() {
                    out.push((
                        s("parkingBrakeInstruction"),
                        s(LONG_CONTEXT.parking_brake_instruction.as_str()),
                    ));
                }
                out.extend([
                    (s("parkingBrakeStatus"), s(status)),
                    (s("_parkingBrakeForce"), self.parking_brake_force.clone()),
                    (s("_slopeAngle"), self.slope_angle.clone()),
                ]);
                PyValue::Dict(out)
            }
            "pressBrakePedal" => {
                let p = &a[0];
                if py_cmp(p, "<", &zero)? || py_cmp(p, ">", &PyValue::Int(1))? {
                    return Ok(error("Pedal position must be between 0 and 1."));
                }
                if p.py_eq(&zero) {
                    self.set("brakePedalStatus", s("released"));
                    self.brake_pedal_force = PyValue::Float(0.0);
                    return Ok(dict([
                        ("brakePedalStatus", s("released")),
                        ("brakePedalForce", PyValue::Float(0.0)),
                    ]));
                }
                // Kept as Python computes it: an int position gives an int force.
                let force = py_arith(p, '*', &PyValue::Int(1000))?;
                self.brake_pedal_force = force.clone();
                self.set("brakePedalStatus", s("pressed"));
                dict([
                    ("brakePedalStatus", s("pressed")),
                    ("brakePedalForce", PyValue::Float(py_float(&force)?)),
                ])
            }
            "releaseBrakePedal" => {
                self.set("brakePedalStatus", s("released"));
                self.brake_pedal_force = PyValue::Float(0.0);
                dict([
                    ("brakePedalStatus", s("released")),
                    ("brakePedalForce", PyValue::Float(0.0)),
                ])
            }
            "setCruiseControl" => {
                if self.is("engine_state", "stopped") {
                    return Ok(error(
                        "Start the engine before activating the cruise control.",
                    ));
                }
                let speed = py_float(&a[0])?;
                let distance = PyValue::Float(py_float(&a[2])?);
                self.set("distanceToNextVehicle", distance.clone());
                if !(0.0..=120.0).contains(&speed) || speed % 5.0 != 0.0 {
                    return Ok(error("Invalid speed"));
                }
                let status = if super::truthy(&a[1]) {
                    "active"
                } else {
                    "inactive"
                };
                self.set("cruiseStatus", s(status));
                dict([
                    ("cruiseStatus", s(status)),
                    ("currentSpeed", PyValue::Float(speed)),
                    ("distanceToNextVehicle", distance),
                ])
            }
            "get_current_speed" => dict([(
                "currentSpeed",
                PyValue::Float(self.random.uniform(0.0, 120.0)),
            )]),
            "display_log" => dict([("log", a[0].clone())]),
            "estimate_drive_feasibility_by_mileage" => {
                let range = py_arith(self.attr("fuelLevel"), '*', &PyValue::Float(MPG))?;
                dict([("canDrive", PyValue::Bool(!py_cmp(&range, "<", &a[0])?))])
            }
            "liter_to_gallon" => {
                dict([("gallon", py_arith(&a[0], '*', &PyValue::Float(0.264172))?)])
            }
            "gallon_to_liter" => dict([("liter", py_arith(&a[0], '*', &PyValue::Float(3.78541))?)]),
            "estimate_distance" => {
                let (x, y) = (py_str(&a[0]), py_str(&a[1]));
                let distances = &TABLES.vehicle.distances;
                let found = pair(distances, &x, &y).or_else(|| pair(distances, &y, &x));
                let mut out = match found {
                    Some(d) => vec![(s("distance"), PyValue::Float(d))],
                    None => vec![(s("error"), s("distance not found in database."))],
                };
                if self.long_context() {
                    out.push((
                        s("intermediaryCities"),
                        LONG_CONTEXT.intermediary_cities.clone(),
                    ));
                }
                PyValue::Dict(out)
            }
            "get_zipcode_based_on_city" => {
                let city = py_str(&a[0]);
                let zip = TABLES
                    .vehicle
                    .zipcodes
                    .get(&city)
                    .map_or("00000", String::as_str);
                dict([("zipcode", s(zip))])
            }
            "set_navigation" => {
                self.set("destination", a[0].clone());
                dict([("status", s(format!("Navigating to {}", py_str(&a[0]))))])
            }
            "check_tire_pressure" => {
                let names = [
                    "frontLeftTirePressure",
                    "frontRightTirePressure",
                    "rearLeftTirePressure",
                    "rearRightTirePressure",
                ];
                let mut total = PyValue::Int(0);
                for n in names {
                    total = py_arith(&total, '+', self.attr(n))?;
                }
                let avg = py_float(&total)? / 4.0;
                let mut out: Vec<(PyValue, PyValue)> = names
                    .iter()
                    .map(|n| (s(*n), self.attr(n).clone()))
                    .collect();
                out.push((
                    s("healthy_tire_pressure"),
                    PyValue::Bool((30.0..=35.0).contains(&avg)),
                ));
                let car_info = if self.long_context() {
                    s(LONG_CONTEXT.car_info.as_str())
                } else {
                    PyValue::Dict(Vec::new())
                };
                out.push((s("car_info"), car_info));
                PyValue::Dict(out)
            }
            "find_nearest_tire_shop" => {
                dict([("shopLocation", s("456 Oakwood Avenue, Rivermist, 83214"))])
            }
            _ => unreachable!("method table and dispatch agree"),
        })
    }

    fn display(&self, option: &PyValue) -> PyValue {
        let at = |n: &str| self.attr(n).clone();
        match py_str(option).as_str() {
            "fuel" => dict([("fuelLevel", at("fuelLevel"))]),
            "battery" => dict([("batteryVoltage", at("batteryVoltage"))]),
            "doors" => dict([("doorStatus", at("doorStatus"))]),
            "climate" => dict([
                ("currentACTemperature", at("acTemperature")),
                ("fanSpeed", at("fanSpeed")),
                ("climateMode", at("acMode")),
                ("humidityLevel", at("humidityLevel")),
            ]),
            "headlights" => dict([("headlightStatus", at("headLightStatus"))]),
            "parkingBrake" => dict([
                ("parkingBrakeStatus", at("parkingBrakeStatus")),
                ("parkingBrakeForce", self.parking_brake_force.clone()),
                ("slopeAngle", self.slope_angle.clone()),
            ]),
            "brakePedal" => dict([
                ("brakePedalStatus", at("brakePedalStatus")),
                ("brakePedalForce", self.brake_pedal_force.clone()),
            ]),
            "engine" => dict([("engineState", at("engine_state"))]),
            _ => error("Invalid option"),
        }
    }
}

impl World for VehicleControlApi {
    fn class(&self) -> &'static str {
        CLASS
    }

    fn load(&mut self, config: &serde_json::Value, long_context: bool) -> Result<(), PyException> {
        let d = VehicleControlApi::default();
        let cfg = |key: &str| config.get(key).map(PyValue::from_json);
        for ((name, key), (_, default)) in PUBLIC.iter().zip(d.attrs) {
            let v = if key.is_empty() {
                default
            } else {
                cfg(key).unwrap_or(default)
            };
            self.set(name, v);
        }
        self.set("long_context", PyValue::Bool(long_context));
        let locked = match self.attr("doorStatus") {
            PyValue::Dict(doors) => doors
                .iter()
                .filter(|(_, v)| matches!(v, PyValue::Str(t) if t == "locked"))
                .count(),
            _ => 0,
        };
        self.set("remainingUnlockedDoors", PyValue::Int(4 - locked as i128));
        self.parking_brake_force = cfg("parkingBrakeForce").unwrap_or(d.parking_brake_force);
        self.slope_angle = cfg("slopeAngle").unwrap_or(d.slope_angle);
        self.brake_pedal_force = cfg("brakePedalForce").unwrap_or(d.brake_pedal_force);
        self.random = seeded_random(config, DEFAULT_SEED);
        Ok(())
    }

    fn call(
        &mut self,
        method: &str,
        args: Vec<PyValue>,
        kwargs: Vec<(String, PyValue)>,
    ) -> Result<PyValue, PyException> {
        let (m, a) = bind_method(CLASS, METHODS, method, args, kwargs)?;
        self.dispatch(m, a)
    }

    fn state(&self) -> Vec<(String, PyValue)> {
        self.attrs
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfcl::pyfmt::py_repr;

    /// What a few long_context calls answer, and the state after them.
    fn run(w: &mut VehicleControlApi) -> Vec<String> {
        let calls = [
            ("get_outside_temperature_from_google", Vec::new()),
            ("activateParkingBrake", vec![s("engage")]),
            ("displayCarStatus", vec![s("parkingBrake")]),
            ("estimate_distance", vec![s("83214"), s("74532")]),
            ("check_tire_pressure", Vec::new()),
            ("get_outside_temperature_from_google", Vec::new()),
        ];
        let mut out: Vec<String> = calls
            .into_iter()
            .map(|(m, a)| py_repr(&w.call(m, a, Vec::new()).expect("call")))
            .collect();
        out.extend(w.state().iter().map(|(k, v)| format!("{k}={}", py_repr(v))));
        out
    }

    #[test]
    fn a_clone_of_a_long_context_load_behaves_like_a_fresh_load() {
        let config = serde_json::json!({"fuelLevel": 10.0});
        let mut loaded = VehicleControlApi::default();
        loaded.load(&config, true).expect("load");
        let mut copy = loaded.clone();
        let mut fresh = VehicleControlApi::default();
        fresh.load(&config, true).expect("load");
        let want = run(&mut fresh);
        assert_eq!(run(&mut copy), want);
        assert_eq!(run(&mut loaded), want);
        assert!(want[0].starts_with("{'-1_day': {"));
        assert!(want[0].contains("'outsideTemperature': "));
        assert!(want[2].starts_with("{'metadata': ") && want[2].contains("Manufacturer: Audi;"));
        // A plain load adds none of it.
        let mut plain = VehicleControlApi::default();
        plain.load(&config, false).expect("load");
        let answers = run(&mut plain);
        assert!(answers[0].starts_with("{'outsideTemperature': "));
        assert!(answers[4].ends_with("'car_info': {}}"));
    }
}
