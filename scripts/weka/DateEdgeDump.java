import java.io.BufferedReader;
import java.io.InputStreamReader;
import weka.core.Attribute;

/**
 * WEKA's DATE attribute on single values. Reads tab-separated lines from stdin:
 * "P pattern value" prints the epoch milliseconds weka.core.Attribute.parseDate gives (what ArffLoader
 * stores) or ERR; "F pattern millis" prints Attribute.formatDate (what WEKA writes). A new attribute per
 * line (parsing a zone changes a SimpleDateFormat's zone).
 */
public class DateEdgeDump {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            Attribute a = new Attribute("d", f[1]);
            if (f[0].equals("P")) {
                try {
                    System.out.println(Long.toString((long) a.parseDate(f[2])));
                } catch (Exception e) {
                    System.out.println("ERR");
                }
            } else {
                System.out.println(a.formatDate(Double.parseDouble(f[2])));
            }
        }
    }
}
