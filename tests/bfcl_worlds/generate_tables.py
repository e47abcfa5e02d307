#!/usr/bin/env python3
"""Generate src/bfcl/worlds/tables.json: the lookup tables of BFCL's backends.

Several of BFCL's multi-turn backend methods answer from a fixed table
(VehicleControlAPI.estimate_distance / get_zipcode_based_on_city,
TradingBot.get_symbol_by_name / get_available_stocks, TravelAPI.get_flight_cost /
compute_exchange_rate / get_nearest_airport_by_city). toolgauge's Rust ports read
those tables from the JSON file written here.

This script is ours. It only *imports* the installed `bfcl_eval` package and
queries the backends' behaviour: the candidate inputs of each method are
discovered at runtime (the string constants held by the method's code object,
plus what other methods return, e.g. list_all_airports()), every candidate (or
pair of candidates) is passed to the method, and the answers that are not the
method's "not found" answer make up the table.

    /tmp/bfcl-venv/bin/python tests/bfcl_worlds/generate_tables.py          # write
    /tmp/bfcl-venv/bin/python tests/bfcl_worlds/generate_tables.py --check  # exit 1 if stale

(Set up the virtualenv as described in tests/bfcl_worlds/generate.py.)
"""

import argparse
import json
import sys
from importlib.metadata import version as pkg_version
from pathlib import Path

from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.trading_bot import TradingBot
from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.travel_booking import TravelAPI
from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.vehicle_control import (
    VehicleControlAPI,
)

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "src" / "bfcl" / "worlds" / "tables.json"
NOT_A_NAME = "\x00toolgauge: surely not a known input\x00"


def string_constants(func):
    """Every str constant in the function's code object (nested tuples included)."""
    found = []

    def walk(value):
        if isinstance(value, str):
            if value not in found:
                found.append(value)
        elif isinstance(value, (tuple, frozenset)):
            for item in value:
                walk(item)
        elif hasattr(value, "co_consts"):
            for item in value.co_consts:
                walk(item)

    walk(func.__code__)
    return found


def fresh(cls, long_context=False):
    instance = cls()
    instance._load_scenario({}, long_context=long_context)
    return instance


def ordered(value):
    """JSON text keeping Python's dict order (the file itself is written sorted)."""
    return json.dumps(value, ensure_ascii=False)


def vehicle_tables():
    cls = VehicleControlAPI
    unknown = fresh(cls).get_zipcode_based_on_city(NOT_A_NAME)
    zipcodes = {}
    for city in string_constants(cls.get_zipcode_based_on_city):
        answer = fresh(cls).get_zipcode_based_on_city(city)
        if answer != unknown:
            zipcodes[city] = answer["zipcode"]
    candidates = string_constants(cls.estimate_distance)
    candidates += [z for z in zipcodes.values() if z not in candidates]
    distances = {}
    for a in candidates:
        for b in candidates:
            answer = fresh(cls).estimate_distance(a, b)
            if "error" not in answer:
                distances.setdefault(a, {})[b] = answer["distance"]
    return {
        "distances": distances,
        "long_context": vehicle_long_context(cls, distances),
        "zipcodes": zipcodes,
    }


def vehicle_long_context(cls, distances):
    """What the methods add when the instance was loaded with long_context=True."""
    plain = fresh(cls).check_tire_pressure()
    car_info = fresh(cls, True).check_tire_pressure()["car_info"]
    assert plain["car_info"] == {} and isinstance(car_info, str)
    metadata = fresh(cls, True).displayCarStatus("fuel")
    assert list(metadata)[0] == "metadata" and metadata["metadata"] == car_info
    a = next(iter(distances))
    b = next(iter(distances[a]))
    cities = fresh(cls, True).estimate_distance(a, b)["intermediaryCities"]
    assert fresh(cls, True).estimate_distance("", "")["intermediaryCities"] == cities
    brake = fresh(cls, True).activateParkingBrake("engage")["parkingBrakeInstruction"]
    assert fresh(cls, True).activateParkingBrake("release")["parkingBrakeInstruction"] == brake
    # The weather answer is a module-level dict whose "outsideTemperature" entry
    # is set on every call (appended at its end on the first one); kept without it.
    weather = dict(fresh(cls, True).get_outside_temperature_from_google())
    assert list(weather)[-1] == "outsideTemperature"
    del weather["outsideTemperature"]
    return {
        "car_info": car_info,
        "intermediary_cities": cities,
        "parking_brake_instruction": brake,
        "weather": ordered(weather),
    }


def trading_tables():
    cls = TradingBot
    unknown = fresh(cls).get_symbol_by_name(NOT_A_NAME)
    symbols = {}
    for name in string_constants(cls.get_symbol_by_name):
        answer = fresh(cls).get_symbol_by_name(name)
        if answer != unknown:
            symbols[name] = answer["symbol"]
    unknown = fresh(cls).get_available_stocks(NOT_A_NAME)
    sectors = {}
    for sector in string_constants(cls.get_available_stocks):
        answer = fresh(cls).get_available_stocks(sector)
        if answer != unknown:
            sectors[sector] = answer["stock_list"]
    return {"sectors": sectors, "symbols": symbols}


def try_call(method, *args):
    try:
        return method(*args)
    except ValueError:
        return None


def travel_tables():
    cls = TravelAPI
    unknown = fresh(cls).get_nearest_airport_by_city(NOT_A_NAME)
    nearest = {}
    for city in string_constants(cls.get_nearest_airport_by_city):
        answer = fresh(cls).get_nearest_airport_by_city(city)
        if answer != unknown:
            nearest[city] = answer["nearest_airport"]

    airports = list(fresh(cls).list_all_airports())
    for code in string_constants(cls.get_flight_cost) + list(nearest.values()):
        if code not in airports:
            airports.append(code)
    # Two dates whose date factors differ; the smaller economy cost is the base.
    dates = ["2024-01-02", "2024-01-01"]
    routes = {}
    for a in airports:
        for b in airports:
            costs = []
            for date in dates:
                answer = try_call(fresh(cls).get_flight_cost, a, b, date, "economy")
                if answer is not None:
                    costs.extend(answer["travel_cost_list"])
            if costs:
                routes.setdefault(a, {})[b] = min(costs)

    currencies = string_constants(cls.compute_exchange_rate)
    rates = {}
    for base in currencies:
        for target in currencies:
            one = try_call(fresh(cls).compute_exchange_rate, base, target, 1.0)
            if one is None:
                continue
            rate = one["exchanged_value"]
            # A table entry base->target multiplies: value * rate, unrounded.
            # The reverse direction divides and rounds to 2 places instead.
            probes = [1.23456789, 3.14159265, 271.828182]
            if all(
                try_call(fresh(cls).compute_exchange_rate, base, target, v)
                == {"exchanged_value": float(v * rate)}
                for v in probes
            ):
                rates.setdefault(base, {})[target] = rate
    return {
        "exchange_rates": rates,
        "long_context": travel_long_context(cls, routes),
        "nearest_airports": nearest,
        "routes": routes,
    }


def travel_long_context(cls, routes):
    """What a long_context=True load adds, and get_flight_cost's route order then."""
    instance = fresh(cls, True)
    # A date with an odd digit sum (factor 1) in economy: the costs are the bases.
    a = next(iter(routes))
    b = next(iter(routes[a]))
    costs = instance.get_flight_cost(a, b, "2024-01-02", "economy")["travel_cost_list"]
    order = [key.split("|")[:2] for key in instance._flight_cost_lookup]
    assert len(order) == len(costs)
    assert all(routes[f][t] == c for (f, t), c in zip(order, costs))
    return {
        "booking_record": ordered(instance.booking_record),
        "credit_card_list": ordered(instance.credit_card_list),
        "route_order": order,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args()
    tables = {
        "_source": {
            "generated_by": "tests/bfcl_worlds/generate_tables.py",
            "license": "Apache-2.0",
            "package": "bfcl-eval",
            "version": pkg_version("bfcl-eval"),
            "note": "Lookup tables of BFCL's multi-turn backends, queried from the "
            "installed package (Copyright the Gorilla / BFCL authors, Apache-2.0).",
        },
        "TradingBot": trading_tables(),
        "TravelAPI": travel_tables(),
        "VehicleControlAPI": vehicle_tables(),
    }
    text = json.dumps(tables, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else None
        if current != text:
            print(f"{OUT} is stale", file=sys.stderr)
            sys.exit(1)
        return
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({len(text)} bytes)")


if __name__ == "__main__":
    main()
