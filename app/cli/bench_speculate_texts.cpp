// The texts of hearth-cli bench speculate's workloads (bench_speculate.cpp): a Python
// function of 152 lines to edit, and an article of about 1,100 words (~1,500 tokens) to
// summarise. Written for the benchmark; fixed, so that runs stay comparable.
#include "cli/bench_speculate_texts.h"

namespace hearth::cli {

const char* const kSpeculateCode =
    R"CODE(def reconcile_ledger(entries, accounts, fx_rates, period_start, period_end, tolerance=0.01):
    """Reconcile ledger entries against account balances for one period.

    entries:   list of dicts with id, account, date, amount, currency, kind, reference
    accounts:  dict of account id -> dict with currency, opening_balance, closing_balance
    fx_rates:  dict of (currency, date) -> rate into the account currency
    Returns a report dict with per-account totals, mismatches and rejected entries.
    """
    report = {
        "period": (period_start, period_end),
        "accounts": {},
        "mismatches": [],
        "rejected": [],
        "warnings": [],
    }
    seen_ids = set()
    seen_references = {}
    for account_id, account in accounts.items():
        report["accounts"][account_id] = {
            "currency": account["currency"],
            "opening": account["opening_balance"],
            "debits": 0.0,
            "credits": 0.0,
            "fees": 0.0,
            "entries": 0,
        }

    for entry in entries:
        entry_id = entry.get("id")
        if entry_id is None:
            report["rejected"].append({"entry": entry, "reason": "missing id"})
            continue
        if entry_id in seen_ids:
            report["rejected"].append({"entry": entry, "reason": "duplicate id"})
            continue
        seen_ids.add(entry_id)

        account_id = entry.get("account")
        if account_id not in accounts:
            report["rejected"].append({"entry": entry, "reason": "unknown account"})
            continue
        date = entry.get("date")
        if date is None or date < period_start or date > period_end:
            report["rejected"].append({"entry": entry, "reason": "outside the period"})
            continue

        amount = entry.get("amount")
        if not isinstance(amount, (int, float)):
            report["rejected"].append({"entry": entry, "reason": "amount is not a number"})
            continue
        if amount == 0:
            report["warnings"].append(f"entry {entry_id} has a zero amount")

        account = accounts[account_id]
        currency = entry.get("currency", account["currency"])
        if currency != account["currency"]:
            rate = fx_rates.get((currency, date))
            if rate is None:
                report["rejected"].append({"entry": entry, "reason": f"no rate for {currency}"})
                continue
            amount = round(amount * rate, 2)

        reference = entry.get("reference")
        if reference:
            if reference in seen_references:
                first = seen_references[reference]
                report["warnings"].append(
                    f"entry {entry_id} repeats reference {reference} of entry {first}"
                )
            else:
                seen_references[reference] = entry_id

        totals = report["accounts"][account_id]
        kind = entry.get("kind", "transfer")
        if kind == "fee":
            totals["fees"] += abs(amount)
            totals["debits"] += abs(amount)
        elif kind == "refund":
            totals["credits"] += abs(amount)
        elif kind == "transfer":
            if amount < 0:
                totals["debits"] += -amount
            else:
                totals["credits"] += amount
        elif kind == "adjustment":
            if abs(amount) > 1000:
                report["warnings"].append(f"large adjustment {amount} in entry {entry_id}")
            if amount < 0:
                totals["debits"] += -amount
            else:
                totals["credits"] += amount
        else:
            report["rejected"].append({"entry": entry, "reason": f"unknown kind {kind}"})
            continue
        totals["entries"] += 1

    for account_id, totals in report["accounts"].items():
        account = accounts[account_id]
        expected = totals["opening"] + totals["credits"] - totals["debits"]
        expected = round(expected, 2)
        actual = account["closing_balance"]
        totals["expected_closing"] = expected
        totals["actual_closing"] = actual
        difference = round(actual - expected, 2)
        totals["difference"] = difference
        if abs(difference) > tolerance:
            report["mismatches"].append(
                {
                    "account": account_id,
                    "expected": expected,
                    "actual": actual,
                    "difference": difference,
                }
            )
        if totals["entries"] == 0:
            report["warnings"].append(f"account {account_id} has no entries in the period")
        if totals["fees"] > 0.05 * max(totals["debits"], 1.0):
            report["warnings"].append(
                f"fees on account {account_id} are over 5% of its debits"
            )

    daily = {}
    for entry in entries:
        entry_id = entry.get("id")
        if entry_id not in seen_ids:
            continue
        date = entry.get("date")
        if date is None or date < period_start or date > period_end:
            continue
        day = daily.setdefault(date, {"count": 0, "volume": 0.0, "accounts": set()})
        day["count"] += 1
        amount = entry.get("amount")
        if isinstance(amount, (int, float)):
            day["volume"] += abs(amount)
        day["accounts"].add(entry.get("account"))
    busiest = None
    for date, day in sorted(daily.items()):
        day["accounts"] = sorted(a for a in day["accounts"] if a is not None)
        if busiest is None or day["count"] > daily[busiest]["count"]:
            busiest = date
    report["daily"] = daily
    report["busiest_day"] = busiest

    report["summary"] = {
        "accounts": len(report["accounts"]),
        "entries": len(seen_ids),
        "rejected": len(report["rejected"]),
        "mismatches": len(report["mismatches"]),
        "warnings": len(report["warnings"]),
        "balanced": not report["mismatches"],
    }
    return report
)CODE";

const char* const kSpeculateArticle =
    R"TEXT(The history of the bicycle is a story of many small inventions, each one solving a problem that the previous design had made obvious. The first machine that most historians accept as a bicycle appeared in 1817, when Karl Drais, a civil servant in the German state of Baden, built what he called a running machine. It had two wheels of equal size joined by a wooden frame, a padded seat, and a handlebar that turned the front wheel. There were no pedals. The rider sat on the frame and pushed against the ground with both feet, gliding between pushes. Drais was reportedly motivated by a series of poor harvests that had made horses expensive to feed, and he hoped that a cheap personal vehicle might replace them for short journeys. His machine attracted attention across Europe, and copies soon appeared in France and Britain, where they were known as hobby horses or dandy horses. The fashion faded within a few years, partly because the machines were heavy, partly because riders damaged footpaths and collided with pedestrians, and partly because several cities banned them.

For the next four decades inventors experimented with three- and four-wheeled machines driven by hand cranks and treadles, but none became popular. The decisive step came in the 1860s in Paris, when pedals were attached directly to the hub of the front wheel. Who first had this idea is still disputed. Pierre Michaux, a maker of carriages, and his son Ernest are often credited, as is Pierre Lallement, a mechanic who later patented a similar design in the United States. Whoever deserves the credit, the result was the velocipede, a machine with an iron frame, wooden wheels with iron tyres, and cranks on the front axle. It was faster than the running machine and could be ridden without touching the ground, but it was also extremely uncomfortable on the cobbled streets of the period, which earned it the English nickname boneshaker. Even so, velocipedes became a craze in the late 1860s. Riding schools opened in Paris, London and New York, races were organised, and manufacturers struggled to keep up with demand.

Because the pedals turned the front wheel directly, one turn of the pedals moved the machine forward by exactly one circumference of that wheel. The only way to go faster without pedalling faster was to make the front wheel bigger. Through the 1870s, designers did exactly that, and the result was the high wheeler, later called the penny-farthing after the largest and smallest British coins of the time. Its front wheel could be as much as one and a half metres across, with a small trailing wheel behind for balance. Improvements in materials made this possible: hollow steel tubing reduced weight, wire spokes under tension replaced heavy wooden ones, and solid rubber tyres softened the ride a little. The high wheeler was fast and, on a good road, graceful. It was also dangerous. The rider sat almost directly above the front axle, so any sudden stop, such as a stone or a rut, could throw him over the handlebars head first. This kind of fall was so common that it had its own name, taking a header. As a result, the high wheeler was mostly ridden by young, athletic men who could afford both the machine and the risk.

Manufacturers looked for ways to make cycling safer and more widely appealing. Some built tricycles, which were stable and became popular with older riders and with women, whose long skirts made the high wheeler nearly impossible to mount. Others tried to lower the rider by placing the pedals elsewhere. The answer that finally worked was the chain drive. In 1885, John Kemp Starley of Coventry introduced the Rover, a machine with two wheels of similar size, a seat between them, and pedals that turned a toothed sprocket connected by a chain to the rear wheel. Because the sprockets could have different numbers of teeth, the rear wheel could turn faster than the pedals, giving the effect of a large wheel without its height. The Rover and the machines that copied it were called safety bicycles, and within a few years they had made the high wheeler obsolete.

One more invention completed the modern bicycle. In 1888, John Boyd Dunlop, a Scottish veterinarian living in Belfast, developed a practical pneumatic tyre, reportedly to make his young son's tricycle more comfortable. Air-filled tyres absorbed the shocks of rough roads far better than solid rubber and also made riding noticeably faster. Racing cyclists who adopted them began to beat riders on solid tyres by wide margins, and within a few years nearly every new bicycle used them. The diamond-shaped frame, formed by two triangles of steel tubing, appeared around the same time and proved so strong and light that it is still the standard design today.

The 1890s brought a bicycle boom in Europe and North America. Prices fell as factories adopted mass production methods, many of which were later borrowed by the automobile industry. Millions of people who had never owned a horse could now travel several times farther than they could walk. Cycling clubs pressed governments to improve roads, and in several countries the campaign for good roads began with cyclists rather than motorists. The bicycle also had social effects that surprised its inventors. It gave young people a new independence from their families, widened the area in which they could find work or a partner, and played a visible part in the changing position of women. Women cyclists adopted shorter skirts and divided garments called bloomers, and some campaigners for women's rights described the bicycle as a machine of freedom.

In the twentieth century the automobile displaced the bicycle as the main form of personal transport in wealthy countries, but the bicycle kept developing. Derailleur gears, which move the chain between sprockets of different sizes, became reliable in the 1930s and allowed riders to climb steep hills without dismounting. Lightweight alloys and later carbon fibre reduced weight further. In much of Asia, Africa and Latin America the bicycle remained an essential working vehicle, carrying goods and passengers as well as commuters. Since the 1970s, concerns about congestion, pollution, health and the cost of fuel have brought renewed interest in cycling in many cities, and some, such as Amsterdam and Copenhagen, have built extensive networks of separated cycle paths. More recently, electric bicycles, which add a small battery-powered motor to assist the rider, have made cycling practical for longer distances and for people who would otherwise find hills or headwinds too demanding. Two centuries after the running machine, the basic idea of Drais's invention, a light vehicle balanced on two wheels and powered by its rider, remains one of the most efficient ways for a person to travel.
)TEXT";

}  // namespace hearth::cli
