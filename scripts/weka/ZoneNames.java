import java.text.*;
import java.util.*;

/** Every zone name Java's SimpleDateFormat ("z") reads in the English locale, with the UTC offset in minutes it gives. */
public class ZoneNames {
    public static void main(String[] args) throws Exception {
        TimeZone.setDefault(TimeZone.getTimeZone("UTC"));
        String[][] zs = DateFormatSymbols.getInstance(Locale.ENGLISH).getZoneStrings();
        TreeSet<String> names = new TreeSet<>();
        for (String[] z : zs) for (int i = 1; i < z.length; i++) if (z[i] != null && !z[i].isEmpty()) names.add(z[i]);
        SimpleDateFormat f = new SimpleDateFormat("yyyy-MM-dd HH:mm z", Locale.ENGLISH);
        f.setLenient(false);
        SimpleDateFormat u = new SimpleDateFormat("yyyy-MM-dd HH:mm", Locale.ENGLISH);
        u.setTimeZone(TimeZone.getTimeZone("UTC"));
        StringBuilder out = new StringBuilder("{");
        boolean first = true;
        for (String n : names) {
            String[] dates = {"1972-01-15 12:00", "1972-07-15 12:00", "1990-01-15 12:00", "1990-07-15 12:00", "2000-01-15 12:00", "2000-07-15 12:00", "2024-01-15 12:00", "2024-07-15 12:00", "2037-01-15 12:00", "2037-07-15 12:00"};
            long[] off = new long[dates.length];
            boolean ok = true;
            for (int k = 0; k < dates.length; k++) {
                ParsePosition p = new ParsePosition(0);
                String text = dates[k] + " " + n;
                Date d = f.parse(text, p);
                if (d == null || p.getIndex() != text.length()) { ok = false; break; }
                off[k] = (u.parse(dates[k]).getTime() - d.getTime()) / 60000L;
            }
            if (!ok) continue;
            if (!first) out.append(",");
            first = false;
            out.append("\n\"").append(n.replace("\\", "\\\\").replace("\"", "\\\"")).append("\": ").append(Arrays.toString(off));
        }
        out.append("\n}\n");
        System.out.print(out);
    }
}
