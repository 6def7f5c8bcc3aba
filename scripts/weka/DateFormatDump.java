import java.io.BufferedReader;
import java.io.FileReader;
import weka.core.Attribute;

/** Each line "pattern TAB epoch-milliseconds" of args[0] as WEKA writes that date in an ARFF file
 *  (Attribute.formatDate, a SimpleDateFormat in the JVM's zone): one line of text per input line. */
public class DateFormatDump {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new FileReader(args[0]));
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\t");
            Attribute date = new Attribute("d", parts[0]);
            System.out.println(date.formatDate(Long.parseLong(parts[1])));
        }
    }
}
